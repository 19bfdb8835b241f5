"""Deterministic training of the small models the examples and tests make
(examples/models/make_demo_model.py, tests/accuracy/make_digits.py): Adam
with a one-cycle learning rate, minibatches in a seeded order. With
torch.manual_seed, one thread and deterministic algorithms set by the
caller, the weights come out the same on every run on a machine."""
import torch


def train(model, x, y, epochs, batch, logits=None):
    """Trains `model` on (x, y) with cross-entropy on logits(x) (default:
    model(x)); returns it in eval mode."""
    logits = logits or model
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    steps = epochs * ((len(x) + batch - 1) // batch)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.02, total_steps=steps)
    gen = torch.Generator().manual_seed(1)
    model.train()
    for _ in range(epochs):
        order = torch.randperm(len(x), generator=gen)
        for i in range(0, len(x), batch):
            idx = order[i:i + batch]
            opt.zero_grad()
            torch.nn.functional.cross_entropy(logits(x[idx]), y[idx]).backward()
            opt.step()
            sched.step()
    model.eval()
    return model
