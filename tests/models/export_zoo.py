#!/usr/bin/python3
"""Exports tinyrt's edge model zoo to ONNX (opset 13) in the ONNX backend-test
layout, with PyTorch's output as the reference:
  OUT/<model>/model.onnx, OUT/<model>/test_data_set_0/{input_0,output_0}.pb

Usage: export_zoo.py OUTDIR [MODEL ...]

Our own instances of the model families edge devices run (keyword spotting,
raw audio, anomaly detection, CIFAR, segmentation, EfficientNet, recurrent
nets, a small transformer). Weights are random (seeded), batch-norm
statistics too, so that folding them is exercised; weights and inputs are
scaled so that outputs are O(1). Nothing here is committed; the build runs
it (tests/CMakeLists.txt, bench/*.sh)."""
import os
import sys

import torch
import torchvision
from torch import nn

from export_torchvision import write_case  # same directory

# name: input shape
ZOO = {
    "kws_dscnn": (1, 1, 49, 10),
    "audio_conv1d": (1, 1, 16000),
    "dense_autoencoder": (1, 640),
    "resnet8_cifar": (1, 3, 32, 32),
    "unet_small": (1, 3, 64, 64),
    "efficientnet_b0": (1, 3, 224, 224),
    "lstm2": (50, 1, 40),  # (T, batch, features): torch's default layout, ONNX's layout 0
    "gru2": (50, 1, 40),
    "bilstm2": (50, 1, 40),
    "lstm256": (100, 1, 40),  # the quantized-LSTM benchmark size: 2 layers, hidden 256, T = 100
    "transformer_encoder": (1, 32, 64),  # (batch, seq, d_model)
    "vad_stft": (1, 1, 16000),  # 1 s of 16 kHz audio
    "sr_switch": (1, 1, 16000),  # 1 s at 16 kHz, or 2 s at 8 kHz; a second input picks the front end
}


def conv_bn_relu(ic, oc, k, stride=1, pad=0, groups=1):
    return [nn.Conv2d(ic, oc, k, stride, pad, groups=groups, bias=False), nn.BatchNorm2d(oc), nn.ReLU()]


class KwsDsCnn(nn.Module):
    """Keyword spotting DS-CNN (Hello Edge / MLPerf Tiny): MFCC 49x10 in."""

    def __init__(self, ch=64, blocks=4, classes=12):
        super().__init__()
        layers = conv_bn_relu(1, ch, (10, 4), 2, (5, 1))
        for _ in range(blocks):
            layers += conv_bn_relu(ch, ch, 3, 1, 1, groups=ch) + conv_bn_relu(ch, ch, 1)
        self.features = nn.Sequential(*layers)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(ch, classes)

    def forward(self, x):
        return self.fc(torch.flatten(self.pool(self.features(x)), 1))


class AudioConv1d(nn.Module):
    """Raw-audio 1-D CNN (M5-style): 1 s of 16 kHz audio in."""

    def __init__(self, classes=10):
        super().__init__()
        layers = [nn.Conv1d(1, 32, 80, stride=4), nn.BatchNorm1d(32), nn.ReLU(), nn.MaxPool1d(4)]
        ic = 32
        for oc in (32, 64, 64):
            layers += [nn.Conv1d(ic, oc, 3, padding=1), nn.BatchNorm1d(oc), nn.ReLU(), nn.MaxPool1d(4)]
            ic = oc
        self.features = nn.Sequential(*layers)
        self.fc = nn.Linear(ic, classes)

    def forward(self, x):
        return self.fc(self.features(x).mean(dim=2))


class DenseAutoencoder(nn.Module):
    """MLPerf Tiny anomaly detection: 640 -> 128 x4 -> 8 -> 128 x4 -> 640."""

    def __init__(self, dim=640, hidden=128, bottleneck=8):
        super().__init__()

        def block(i, o):
            return [nn.Linear(i, o), nn.BatchNorm1d(o), nn.ReLU()]

        sizes = [dim, hidden, hidden, hidden, hidden, bottleneck, hidden, hidden, hidden, hidden]
        layers = []
        for i, o in zip(sizes[:-1], sizes[1:]):
            layers += block(i, o)
        layers.append(nn.Linear(hidden, dim))
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)


class ResBlock(nn.Module):
    def __init__(self, ic, oc, stride):
        super().__init__()
        self.body = nn.Sequential(*conv_bn_relu(ic, oc, 3, stride, 1),
                                  nn.Conv2d(oc, oc, 3, 1, 1, bias=False), nn.BatchNorm2d(oc))
        self.shortcut = nn.Conv2d(ic, oc, 1, stride) if stride != 1 or ic != oc else nn.Identity()
        self.relu = nn.ReLU()

    def forward(self, x):
        return self.relu(self.body(x) + self.shortcut(x))


class ResNet8(nn.Module):
    """MLPerf Tiny image classification ResNet-8 (CIFAR-10)."""

    def __init__(self, classes=10):
        super().__init__()
        self.stem = nn.Sequential(*conv_bn_relu(3, 16, 3, 1, 1))
        self.stacks = nn.Sequential(ResBlock(16, 16, 1), ResBlock(16, 32, 2), ResBlock(32, 64, 2))
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(64, classes)

    def forward(self, x):
        return self.fc(torch.flatten(self.pool(self.stacks(self.stem(x))), 1))


def double_conv(ic, oc):
    return nn.Sequential(*conv_bn_relu(ic, oc, 3, 1, 1), *conv_bn_relu(oc, oc, 3, 1, 1))


class UNetSmall(nn.Module):
    """Three-level U-Net: ConvTranspose up on one level, bilinear Resize + conv
    on the other, Concat skip connections."""

    def __init__(self, classes=2):
        super().__init__()
        self.enc1 = double_conv(3, 16)
        self.enc2 = double_conv(16, 32)
        self.mid = double_conv(32, 64)
        self.pool = nn.MaxPool2d(2)
        self.up2 = nn.ConvTranspose2d(64, 32, 2, stride=2)
        self.dec2 = double_conv(64, 32)
        self.up1 = nn.Sequential(nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False),
                                 nn.Conv2d(32, 16, 3, 1, 1))
        self.dec1 = double_conv(32, 16)
        self.head = nn.Conv2d(16, classes, 1)

    def forward(self, x):
        e1 = self.enc1(x)
        e2 = self.enc2(self.pool(e1))
        m = self.mid(self.pool(e2))
        d2 = self.dec2(torch.cat([self.up2(m), e2], 1))
        d1 = self.dec1(torch.cat([self.up1(d2), e1], 1))
        return self.head(d1)


class Recurrent(nn.Module):
    """2-layer LSTM/GRU over (T, 1, features); Linear head on the last step."""

    def __init__(self, cell, hidden, bidirectional=False, features=40, classes=12):
        super().__init__()
        self.rnn = cell(features, hidden, num_layers=2, bidirectional=bidirectional)
        self.fc = nn.Linear(hidden * (2 if bidirectional else 1), classes)

    def forward(self, x):
        y, _ = self.rnn(x)
        return self.fc(y[-1])


class StftConv(nn.Module):
    """A power spectrogram as voice-activity and keyword models compute it:
    the short-time Fourier transform as a strided Conv1d with fixed weights
    (a Hann-windowed cosine and sine row per frequency bin, 2 (n_fft/2 + 1)
    output channels, n_fft taps), then re^2 + im^2 and log."""

    def __init__(self, n_fft, hop):
        super().__init__()
        bins = n_fft // 2 + 1
        n = torch.arange(n_fft, dtype=torch.float64)
        k = torch.arange(bins, dtype=torch.float64)[:, None]
        window = torch.hann_window(n_fft, periodic=True, dtype=torch.float64)
        angle = 2 * torch.pi * k * n / n_fft
        w = torch.cat([torch.cos(angle), -torch.sin(angle)]) * window / n_fft ** 0.5
        self.conv = nn.Conv1d(1, 2 * bins, n_fft, stride=hop, bias=False)
        with torch.no_grad():
            self.conv.weight.copy_(w[:, None, :].float())
        self.bins = bins

    def forward(self, x):
        s = self.conv(x)
        re, im = s[:, :self.bins], s[:, self.bins:]
        return re * re + im * im


class VadStft(nn.Module):
    """Voice activity detection on an STFT front end (n_fft 400, hop 160:
    402 output channels of 400 taps): log power, two convolutions over
    time, mean, a linear head."""

    def __init__(self, ch=64, classes=2):
        super().__init__()
        self.stft = StftConv(400, 160)
        self.net = nn.Sequential(nn.Conv1d(201, ch, 3, padding=1), nn.BatchNorm1d(ch), nn.ReLU(),
                                 nn.Conv1d(ch, ch, 3, stride=2, padding=1), nn.BatchNorm1d(ch), nn.ReLU())
        self.fc = nn.Linear(ch, classes)

    def forward(self, x):
        return self.fc(self.net(torch.log(self.stft(x) + 1e-6)).mean(dim=2))


class SampleRateSwitch(nn.Module):
    """Keyword spotting with a sample-rate switch (an ONNX If on a runtime
    condition): 1 s of 16 kHz audio through an STFT of 400 taps (hop 160),
    or the first 8000 samples as 1 s of 8 kHz audio through an STFT of 200
    taps (hop 80); each front end maps its bins to 40 mel-like bands (98
    frames either way); then a shared depthwise-separable back end. Only
    the taken front end should run."""

    def __init__(self, ch=64, classes=12):
        super().__init__()
        self.stft16, self.stft8 = StftConv(400, 160), StftConv(200, 80)
        self.mel16, self.mel8 = nn.Conv1d(201, 40, 1, bias=False), nn.Conv1d(101, 40, 1, bias=False)
        with torch.no_grad():
            self.mel16.weight.abs_()
            self.mel8.weight.abs_()
        self.net = nn.Sequential(nn.Conv1d(40, ch, 3, padding=1), nn.BatchNorm1d(ch), nn.ReLU(),
                                 nn.Conv1d(ch, ch, 3, padding=1, groups=ch), nn.BatchNorm1d(ch), nn.ReLU(),
                                 nn.Conv1d(ch, ch, 1), nn.BatchNorm1d(ch), nn.ReLU())
        self.fc = nn.Linear(ch, classes)

    def forward(self, x, sr16k):
        if bool(sr16k):
            f = self.mel16(self.stft16(x))
        else:
            f = self.mel8(self.stft8(x[:, :, :8000]))
        return self.fc(self.net(torch.log(f + 1e-6)).mean(dim=2))


class TransformerEncoder(nn.Module):
    """2-layer post-norm transformer encoder, d_model 64, 4 heads; Linear
    head on the mean over the sequence."""

    def __init__(self, d=64, heads=4, ff=128, layers=2, classes=10):
        super().__init__()
        layer = nn.TransformerEncoderLayer(d, heads, ff, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.fc = nn.Linear(d, classes)

    def forward(self, x):
        return self.fc(self.encoder(x).mean(dim=1))


def build(name):
    if name == "kws_dscnn":
        return KwsDsCnn()
    if name == "audio_conv1d":
        return AudioConv1d()
    if name == "dense_autoencoder":
        return DenseAutoencoder()
    if name == "resnet8_cifar":
        return ResNet8()
    if name == "unet_small":
        return UNetSmall()
    if name == "efficientnet_b0":
        return torchvision.models.efficientnet_b0(weights=None)
    if name == "lstm2":
        return Recurrent(nn.LSTM, 128)
    if name == "gru2":
        return Recurrent(nn.GRU, 128)
    if name == "bilstm2":
        return Recurrent(nn.LSTM, 64, bidirectional=True)
    if name == "lstm256":
        return Recurrent(nn.LSTM, 256)
    if name == "transformer_encoder":
        return TransformerEncoder()
    if name == "vad_stft":
        return VadStft()
    if name == "sr_switch":
        return SampleRateSwitch()
    raise KeyError(name)


def randomize_batchnorm(model):
    for m in model.modules():
        if isinstance(m, nn.modules.batchnorm._BatchNorm):
            with torch.no_grad():
                m.running_mean.uniform_(-0.2, 0.2)
                m.running_var.uniform_(0.5, 1.5)
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.2, 0.2)


def make_input(name, shape):
    if name in ("kws_dscnn", "audio_conv1d", "dense_autoencoder", "lstm2", "gru2", "bilstm2", "lstm256",
                "transformer_encoder", "vad_stft", "sr_switch"):
        return torch.randn(*shape)  # features / audio / embeddings: zero-mean
    return torch.rand(*shape)  # images


def export(name, out_dir):
    torch.manual_seed(0)
    model = build(name)
    randomize_batchnorm(model)
    model.eval()
    x = make_input(name, ZOO[name])
    if name == "sr_switch":
        # Scripted, so that the branch is exported as an If; one data set
        # per front end (the second input decides at run time).
        flags = [torch.tensor(True), torch.tensor(False)]
        write_case(torch.jit.script(model), [(x, f) for f in flags], out_dir, name, ["input", "sr16k"])
        return
    # Traced with autograd on (parameters require grad), so that PyTorch's
    # fused transformer fast path, which has no ONNX export, is not taken.
    write_case(model, x, out_dir, name)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out_dir = sys.argv[1]
    names = sys.argv[2:] or list(ZOO)
    torch.set_num_threads(1)
    for name in names:
        if name not in ZOO:
            sys.exit(f"unknown model {name}; known: {' '.join(ZOO)}")
        if os.path.exists(os.path.join(out_dir, name, "test_data_set_0", "output_0.pb")):
            continue
        export(name, out_dir)


if __name__ == "__main__":
    main()
