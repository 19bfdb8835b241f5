#!/usr/bin/python3
"""Variants of the edge zoo's families that the zoo does not contain, to
check that speed holds off the shapes the code was tuned on (not run by
CI; bench/models.sh knows their names, so bench/compare_ort.sh and
bench/arm_instructions.sh take them): a U-Net with nearest Upsample and a
3x3 stride-2 ConvTranspose, a wider keyword-spotting DS-CNN on 98x40
MFCCs, a one-layer bidirectional batch-first GRU, a 3-layer LSTM of 200
units, a raw-audio net with dilation and a 64-tap first layer, pre-norm
GELU and post-norm ReLU transformer encoders (sequence 50 and 128),
MobileNetV3-Large, MNASNet 0.5, RegNetX-400MF, EfficientNet-B1 on a
non-square image, a dense autoencoder of other widths, and a
voice-activity net on a 512-tap STFT. Random weights, seeded.

Usage: export_variants.py OUTDIR [MODEL ...]  (the backend-test layout)"""
import os
import sys

import torch
import torchvision
from torch import nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "models"))
from export_torchvision import write_case  # noqa: E402
from export_zoo import conv_bn_relu, KwsDsCnn, randomize_batchnorm, StftConv  # noqa: E402


class UNetNearest(nn.Module):
    def __init__(self):
        super().__init__()
        def dc(i, o): return nn.Sequential(*conv_bn_relu(i, o, 3, 1, 1), *conv_bn_relu(o, o, 3, 1, 1))
        self.e1, self.e2, self.m = dc(3, 24), dc(24, 48), dc(48, 96)
        self.pool = nn.MaxPool2d(2)
        self.up2 = nn.ConvTranspose2d(96, 48, 3, stride=2, padding=1, output_padding=1)
        self.d2 = dc(96, 48)
        self.up1 = nn.Sequential(nn.Upsample(scale_factor=2, mode="nearest"), nn.Conv2d(48, 24, 3, 1, 1))
        self.d1 = dc(48, 24)
        self.head = nn.Conv2d(24, 3, 1)
    def forward(self, x):
        e1 = self.e1(x); e2 = self.e2(self.pool(e1)); m = self.m(self.pool(e2))
        d2 = self.d2(torch.cat([self.up2(m), e2], 1))
        d1 = self.d1(torch.cat([self.up1(d2), e1], 1))
        return torch.sigmoid(self.head(d1))

class Rnn(nn.Module):
    def __init__(self, cell, hidden, layers, bidir, feat, batch_first):
        super().__init__()
        self.bf = batch_first
        self.rnn = cell(feat, hidden, num_layers=layers, bidirectional=bidir, batch_first=batch_first)
        self.fc = nn.Linear(hidden * (2 if bidir else 1), 7)
    def forward(self, x):
        y, _ = self.rnn(x)
        return self.fc(y[:, -1] if self.bf else y[-1])

class Audio(nn.Module):
    def __init__(self):
        super().__init__()
        L = [nn.Conv1d(1, 48, 64, stride=8, padding=3), nn.BatchNorm1d(48), nn.ReLU(), nn.MaxPool1d(3)]
        ic = 48
        for oc, k, d in ((48, 5, 1), (96, 3, 2), (96, 3, 1)):
            L += [nn.Conv1d(ic, oc, k, padding=d * (k // 2), dilation=d), nn.BatchNorm1d(oc), nn.ReLU(), nn.MaxPool1d(2)]
            ic = oc
        self.f = nn.Sequential(*L); self.fc = nn.Linear(ic, 5)
    def forward(self, x): return self.fc(self.f(x).amax(dim=2))

class Tfm(nn.Module):
    def __init__(self):
        super().__init__()
        layer = nn.TransformerEncoderLayer(96, 6, 384, dropout=0.0, batch_first=True, activation="gelu", norm_first=True)
        self.enc = nn.TransformerEncoder(layer, 3, enable_nested_tensor=False)
        self.fc = nn.Linear(96, 4)
    def forward(self, x): return self.fc(self.enc(x)[:, 0])

class Dense(nn.Module):
    def __init__(self):
        super().__init__()
        s = [520, 256, 64, 16, 64, 256, 520]
        L = []
        for i, o in zip(s[:-1], s[1:]): L += [nn.Linear(i, o), nn.ReLU()]
        self.n = nn.Sequential(*L[:-1])
    def forward(self, x): return self.n(x)

class Vad(nn.Module):
    def __init__(self):
        super().__init__()
        self.stft = StftConv(512, 128)
        self.net = nn.Sequential(nn.Conv1d(257, 48, 5, padding=2), nn.ReLU(), nn.Conv1d(48, 48, 3, stride=2, padding=1, groups=48), nn.ReLU(), nn.Conv1d(48, 32, 1), nn.ReLU())
        self.fc = nn.Linear(32, 2)
    def forward(self, x): return self.fc(self.net(torch.log(self.stft(x) + 1e-6)).mean(dim=2))

class Tfm2(nn.Module):
    def __init__(self):
        super().__init__()
        layer = nn.TransformerEncoderLayer(64, 4, 128, dropout=0.0, batch_first=True)
        self.enc = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.fc = nn.Linear(64, 4)
    def forward(self, x): return self.fc(self.enc(x).mean(dim=1))

V = {
  "v_tfm_seq128": (Tfm2, (1, 128, 64), "randn"),
  "v_unet_nearest": (UNetNearest, (1, 3, 96, 96), "rand"),
  "v_kws_wide": (lambda: KwsDsCnn(ch=96, blocks=5, classes=35), (1, 1, 98, 40), "randn"),
  "v_gru_bf": (lambda: Rnn(nn.GRU, 96, 1, True, 13, True), (1, 73, 13), "randn"),
  "v_lstm3": (lambda: Rnn(nn.LSTM, 200, 3, False, 64, False), (37, 1, 64), "randn"),
  "v_audio": (Audio, (1, 1, 8000), "randn"),
  "v_tfm_gelu": (Tfm, (1, 50, 96), "randn"),
  "v_mnv3_large": (lambda: torchvision.models.mobilenet_v3_large(weights=None), (1, 3, 224, 224), "rand"),
  "v_mnasnet": (lambda: torchvision.models.mnasnet0_5(weights=None), (1, 3, 224, 224), "rand"),
  "v_regnet": (lambda: torchvision.models.regnet_x_400mf(weights=None), (1, 3, 224, 224), "rand"),
  "v_dense": (Dense, (1, 520), "randn"),
  "v_vad512": (Vad, (1, 1, 16000), "randn"),
  "v_effb1_rect": (lambda: torchvision.models.efficientnet_b1(weights=None), (1, 3, 160, 200), "rand"),
}


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    torch.set_num_threads(1)
    for name in sys.argv[2:] or V:
        if name not in V:
            sys.exit(f"unknown model {name}; known: {' '.join(V)}")
        if os.path.exists(os.path.join(out, name, "test_data_set_0", "output_0.pb")):
            continue
        f, shape, kind = V[name]
        torch.manual_seed(1)
        m = f()
        randomize_batchnorm(m)
        m.eval()
        x = torch.rand(*shape) if kind == "rand" else torch.randn(*shape)
        write_case(m, x, out, name)


if __name__ == "__main__":
    main()
