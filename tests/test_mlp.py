"""The batched MLP (issue 13): one model trained by modelvar.models.mlp equals torch.nn's modules
and optimiser; k models trained at once equal each trained alone."""

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

from modelvar.models import mlp  # noqa: E402

H = {"lr": 3e-3, "weight_decay": 1e-3, "dropout": 0.0, "width1": 32, "width2": 16}


def data(seed, n=150, d=6, c=3):
    rng = np.random.default_rng(seed)
    centers = rng.normal(0, 2, (c, d))
    y = rng.integers(0, c, n)
    return (centers[y] + rng.normal(0, 1, (n, d))).astype(np.float32), y


def reference_net(d, c, w1, w2):
    """The network with torch.nn modules (what the original study's code built)."""
    class Residual(nn.Module):
        def __init__(self, w):
            super().__init__()
            self.body = nn.Sequential(nn.Linear(w, w), nn.BatchNorm1d(w), nn.LeakyReLU(),
                                      nn.Dropout(0.0), nn.Linear(w, w), nn.BatchNorm1d(w),
                                      nn.LeakyReLU(), nn.Dropout(0.0))

        def forward(self, x):
            return x + self.body(x)

    return nn.Sequential(nn.Linear(d, w1, bias=False), nn.BatchNorm1d(w1), nn.LeakyReLU(),
                         Residual(w1), nn.Linear(w1, w2), nn.BatchNorm1d(w2), nn.LeakyReLU(),
                         Residual(w2), nn.Linear(w2, c))


def test_one_model_equals_torch_nn_and_adamw():
    """In float64. (In float32 the two drift apart by ~1e-3 within a few epochs: the biases of
    the linear layers before a BatchNorm have a true gradient of 0, BatchNorm removes them, so
    their gradients are float32 noise of ~1e-9, which Adam's normalisation, with ε = 1e-8,
    turns into steps of a sizeable share of the learning rate in directions set by rounding.
    In float64 that noise is ~1e-17, far below ε, and the two computations agree to 1e-9.)"""
    X, y = data(0)
    epochs, seed = 4, 123
    ours = mlp.train([X], [y], n_classes=3, hparams=[H], seeds=[seed], epochs=epochs,
                     dtype=torch.float64)
    # the same initial weights and batch order, trained by torch.nn + torch.optim
    gen = torch.Generator().manual_seed(seed)
    init = mlp.init_models([gen], 6, 3, 32, 16, dtype=torch.float64)
    net = reference_net(6, 3, 32, 16).double()
    linears = [m for m in net.modules() if isinstance(m, nn.Linear)]
    names = ["in", "r1a", "r1b", "mid", "r2a", "r2b", "out"]
    norms = [m for m in net.modules() if isinstance(m, nn.BatchNorm1d)]
    with torch.no_grad():
        for layer, name in zip(linears, names, strict=True):
            layer.weight.copy_(init.params[f"{name}.w"][0].T)
            if layer.bias is not None:
                layer.bias.copy_(init.params[f"{name}.b"][0])
    assert len(norms) == 6
    opt = torch.optim.AdamW(net.parameters(), lr=H["lr"], weight_decay=H["weight_decay"])
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=epochs)
    Xt, yt = torch.as_tensor(X, dtype=torch.float64), torch.as_tensor(y)
    net.train()
    for _ in range(epochs):
        order = torch.randperm(len(X), generator=gen)
        bounds = mlp.batch_bounds(len(X), mlp.batch_size(len(X)))
        for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
            opt.zero_grad()
            nn.functional.cross_entropy(net(Xt[order[lo:hi]]), yt[order[lo:hi]]).backward()
            opt.step()
        sched.step()
    net.eval()
    with torch.no_grad():
        want = torch.softmax(net(Xt), dim=1).double().numpy()
    got = mlp.predict_proba(ours, [X])[0]
    np.testing.assert_allclose(got, want, atol=1e-9)
    assert (got.argmax(1) == want.argmax(1)).all()


def _four_runs():
    runs = [data(s) for s in range(4)]
    hparams = [{**H, "lr": lr, "weight_decay": wd, "dropout": p}
               for lr, wd, p in ((3e-3, 1e-3, 0.0), (1e-2, 1e-4, 0.2), (5e-4, 0.0, 0.5),
                                 (3e-3, 1e-3, 0.1))]
    return [x for x, _ in runs], [t for _, t in runs], hparams, [11, 12, 13, 11]


@pytest.mark.parametrize("process_threads", [1, 2])
def test_k_models_at_once_equal_each_alone(process_threads):
    """Bit for bit, whatever the process's torch thread count: training pins its intra-op
    threads (mlp.CPU_THREADS), so batched matmuls and per-model reductions sum in one order.
    With 2 threads and no pin they differed by up to 1.1e-3 on a 2-core AMD EPYC (issue 20)."""
    X, y, hparams, seeds = _four_runs()
    before = torch.get_num_threads()
    torch.set_num_threads(process_threads)
    try:
        together = mlp.predict_proba(mlp.train(X, y, n_classes=3, hparams=hparams, seeds=seeds,
                                               epochs=3), X)
        assert torch.get_num_threads() == process_threads  # the pin is undone afterwards
        for j in range(4):
            alone = mlp.predict_proba(mlp.train([X[j]], [y[j]], n_classes=3,
                                                hparams=[hparams[j]], seeds=[seeds[j]],
                                                epochs=3), [X[j]])[0]
            np.testing.assert_array_equal(together[j], alone)
    finally:
        torch.set_num_threads(before)
    # the models differ where their runs differ (not one model copied k times)
    assert not np.allclose(together[0], together[3])  # same seed, other data


def test_predictions_do_not_depend_on_the_thread_count():
    """The same runs (alone, and 3 stacked) trained with the process at 1 and at 2 torch
    threads: identical bits."""
    X, y, hparams, seeds = _four_runs()
    before = torch.get_num_threads()
    got = []
    try:
        for threads in (1, 2):
            torch.set_num_threads(threads)
            for k in (1, 3):  # alone and stacked
                got.append(mlp.predict_proba(mlp.train(X[:k], y[:k], n_classes=3,
                                                       hparams=hparams[:k], seeds=seeds[:k],
                                                       epochs=2), X[:k]))
    finally:
        torch.set_num_threads(before)
    np.testing.assert_array_equal(got[0], got[2])
    np.testing.assert_array_equal(got[1], got[3])


def test_groups_and_refusals():
    h = [H, {**H, "width1": 64}, H, {**H, "lr": 1.0}]
    assert mlp.groups_of(h, [100, 100, 100, 90]) == [[0, 2], [1], [3]]
    X, y = data(1)
    with pytest.raises(ValueError, match="equal training shapes and widths"):
        mlp.train([X, X[:-1]], [y, y[:-1]], n_classes=3, hparams=[H, H], seeds=[1, 2])
    assert mlp.batch_bounds(129, 64) == [0, 64, 129]  # no 1-sample batch
    assert math.isclose(sum(np.diff(mlp.batch_bounds(10_000, 1024))), 10_000)


def test_a_fit_job_gives_the_same_mlp_runs_batched_or_one_at_a_time():
    from modelvar.data import load
    from modelvar.pipeline.fitting import fit_repeat
    from modelvar.study.cells import Cell

    ds = load("vehicle", {"source": "embedded"})
    kw = dict(classifier="mlp", repeat=1, n_runs=4, test_fraction=0.25, root_seed=3, epochs=2,
              base_hparams={"width1": 32, "width2": 32})
    for cell in (Cell(data=("rel", 0.2), downsample=0.5, model_seed="per-run"),
                 Cell(hparam=("rel", 0.2))):  # hparam noise: other widths, other groups
        batched, runs_b = fit_repeat(ds, cell=cell, batch_mlp=True, **kw)
        alone, runs_a = fit_repeat(ds, cell=cell, batch_mlp=False, **kw)
        proba = [c for c in batched.columns if c.startswith("proba:")]
        np.testing.assert_array_equal(batched[proba].to_numpy(), alone[proba].to_numpy())
        assert (batched["y_pred"] == alone["y_pred"]).all()
        assert list(runs_b["hparams"]) == list(runs_a["hparams"])
        assert list(runs_b["streams"]) == list(runs_a["streams"])
        # the runs record how long they trained (the cost model's calibration reads it)
        assert list(runs_b["epochs"]) == list(runs_a["epochs"]) == [2] * 4
    _, runs = fit_repeat(ds, cell=Cell(), **{**kw, "epochs": None, "n_runs": 1})
    assert list(runs["epochs"]) == [mlp.MLP_EPOCHS]
    _, runs = fit_repeat(ds, cell=Cell(), **{**kw, "classifier": "lr-sgd", "base_hparams": None,
                                             "epochs": None, "n_runs": 1})
    assert runs["epochs"].isna().all()  # lr-sgd does not train for epochs


def test_masks_drawn_on_the_device_keep_models_apart(monkeypatch):
    """The GPU's way of drawing dropout masks (per-model generators on the device, seeded from
    the model's own stream), run on the CPU: a stack of models still equals each alone, bit for
    bit; the masks are other draws than the CPU's, the same on every call."""
    monkeypatch.setattr(mlp, "masks_on_device", lambda device: True)
    X, y, hparams, seeds = _four_runs()

    def fit(k_runs):
        return mlp.predict_proba(mlp.train([X[j] for j in k_runs], [y[j] for j in k_runs],
                                           n_classes=3, hparams=[hparams[j] for j in k_runs],
                                           seeds=[seeds[j] for j in k_runs], epochs=3),
                                 [X[j] for j in k_runs])

    together = fit(range(4))
    np.testing.assert_array_equal(together, fit(range(4)))
    for j in range(4):
        np.testing.assert_array_equal(together[j], fit([j])[0])
    monkeypatch.undo()
    assert not np.array_equal(together[1], fit([1])[0])  # the CPU's draws: another model


def test_device_masks_are_inverted_dropout_at_the_run_rate():
    gens = mlp.mask_generators([torch.Generator().manual_seed(s) for s in (1, 2)], "cpu")
    masks = mlp._dropout_masks(gens, np.array([0.25, 0.0]), 4000, (64, 32), "cpu",
                               torch.float32)
    m = masks["r1a"].numpy()
    assert m.shape == (2, 4000, 64)
    assert set(np.unique(m[0])) == {0.0, np.float32(1 / 0.75)}
    assert abs((m[0] > 0).mean() - 0.75) < 0.01  # 256,000 draws: sd 0.0009
    assert (m[1] == 1.0).all()
    # each model's masks come from its own seed stream: seeds 1 and 2 give other draws
    again = mlp.mask_generators([torch.Generator().manual_seed(s) for s in (2, 1)], "cpu")
    swapped = mlp._dropout_masks(again, np.array([0.25, 0.25]), 4000, (64, 32), "cpu",
                                 torch.float32)["r1a"].numpy()
    np.testing.assert_array_equal(swapped[1], m[0])
