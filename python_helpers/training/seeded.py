"""Deterministic training of the small models the examples and tests make
(examples/models/make_demo_model.py, tests/accuracy/make_digits.py): Adam
with a one-cycle learning rate, minibatches in a seeded order. After
deterministic(seed) (one thread, deterministic algorithms, the seed), the
weights come out the same on every run on a machine
(examples/models/make_detector.py trains with its own loss after it)."""
import torch


def deterministic(seed):
    """One thread, deterministic algorithms and `seed`: what makes a
    training run repeat exactly on a machine."""
    torch.set_num_threads(1)
    torch.manual_seed(seed)
    torch.use_deterministic_algorithms(True)


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
