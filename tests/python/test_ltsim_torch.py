"""ltsim.torch against ltsim: safetensors round trips, malformed files, and the differential
test of PyTorch's forward against `ltsim eval` (docs/python.md).

Run by CTest as `/usr/bin/python3 test_ltsim_torch.py LTSIM_BINARY` with PYTHONPATH=<build>/python;
exits 77 (skipped) with a message when torch or numpy is missing.
"""

import json
import os
import struct
import subprocess
import sys
import tempfile
import unittest

try:
    import numpy as np
    import torch
except ImportError as missing:  # CI installs python3-torch (tools/setup.sh)
    print(f"skipped: {missing} (apt-get install python3-torch python3-numpy)")
    sys.exit(77)

import ltsim  # noqa: E402
from ltsim import safetensors  # noqa: E402
from ltsim.torch import files  # noqa: E402
from ltsim.torch.model import Config, LayerConfig, LimitTransformer  # noqa: E402
from ltsim.torch.tasks import Task  # noqa: E402
from ltsim.torch.train import train  # noqa: E402

LTSIM = None

# float32 forward vs ltsim's double evaluation of the same (float32-rounded) weights: every
# output is a short chain of float32 dot products (d ≤ 6) and a softmax over ≤ 512 keys, so
# its rounding error is a few hundred float32 ulps of the largest intermediate at most; we
# allow 2e-5·(1 + |f(x)|) (≈ 170 ulps) and report the measured maximum.
F32_TOL = 2e-5
# float64 forward vs ltsim: both in double, different summation orders over ≤ 512 terms.
F64_TOL = 1e-9

# Lengths ≤ 512 checked: every length up to 24 (where the local bias, Δ and the first
# positions matter most), then 24 lengths spread over (24, 512] including 512 itself.
LENGTHS = sorted(set(list(range(1, 25)) + [int(v) for v in np.geomspace(25, 512, 24)] + [512]))


def run_ltsim(*args, check=True):
    result = subprocess.run([LTSIM, *args], capture_output=True, text=True)
    if check and result.returncode != 0:
        raise AssertionError(f"ltsim {' '.join(args)}: exit {result.returncode}: {result.stderr}")
    return result


def ltsim_batch(model_path, strings, workdir):
    """ltsim eval --batch on .u8 files of `strings` (lists of tokens): [len, k] array."""
    specs = []
    for i, x in enumerate(strings):
        path = os.path.join(workdir, f"x{i}.u8")
        np.asarray(x, dtype=np.uint8).tofile(path)
        specs.append(path)
    listing = os.path.join(workdir, "batch.txt")
    with open(listing, "w") as out:
        out.write("\n".join(specs) + "\n")
    lines = run_ltsim("eval", model_path, "--batch", listing, "--json").stdout.splitlines()
    return np.array([json.loads(line)["output"] for line in lines[1:]])


def random_config(rng, layers=None):
    s = int(rng.integers(2, 5))
    d = int(rng.integers(2, 7))
    period = int(rng.integers(1, 4))
    tau = int(rng.integers(0, 3))
    layer_list = []
    for _ in range(layers or int(rng.integers(1, 3))):
        layer_list.append(LayerConfig(heads=int(rng.integers(1, 3)),
                                      bias_scaling=str(rng.choice(["none", "log"])),
                                      mlp=int(rng.choice([0, 3])),
                                      rank=int(rng.integers(1, d + 1)) if rng.uniform() < 0.3 else None))
    return Config(alphabet=s, width=d, period=period, locality=tau, layers=layer_list,
                  outputs=int(rng.integers(1, 3)), name="random", meta={"test": True})


class SafetensorsFiles(unittest.TestCase):
    def test_round_trip_f32_and_f64(self):
        rng = np.random.default_rng(1)
        tensors = {"a": rng.normal(size=(3, 4)), "b": rng.normal(size=5), "c": rng.normal(size=(1, 1))}
        with tempfile.TemporaryDirectory() as tmp:
            for dtype in ("F32", "F64"):
                path = os.path.join(tmp, f"t_{dtype}.safetensors")
                safetensors.write(path, tensors, {"k": "v"}, dtype)
                back, meta = safetensors.read(path)
                self.assertEqual(meta, {"k": "v"})
                for name, value in tensors.items():
                    want = value.astype(np.float32) if dtype == "F32" else value
                    np.testing.assert_array_equal(back[name], want.astype(np.float64))
                with open(path, "rb") as f:
                    (n,) = struct.unpack("<Q", f.read(8))
                    self.assertEqual(n % 8, 0)
                    header = json.loads(f.read(n))
                self.assertEqual(header["b"], {"dtype": dtype, "shape": [5],
                                               "data_offsets": header["b"]["data_offsets"]})

    def test_malformed_files_are_refused(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "bad.safetensors")

            def write(header, data=b""):
                text = json.dumps(header).encode()
                with open(path, "wb") as f:
                    f.write(struct.pack("<Q", len(text)) + text + data)

            cases = [
                ({"x": {"dtype": "BF16", "shape": [1], "data_offsets": [0, 2]}}, b"ab", "dtype"),
                ({"x": {"dtype": "F32", "shape": [2], "data_offsets": [0, 4]}}, b"abcd", "byte range"),
                ({"x": {"dtype": "F32", "shape": [1], "data_offsets": [0, 8]}}, b"abcd", "outside"),
                ({"x": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
                  "y": {"dtype": "F32", "shape": [1], "data_offsets": [2, 6]}}, b"abcdefgh", "overlaps"),
            ]
            for header, data, words in cases:
                write(header, data)
                with self.assertRaisesRegex(safetensors.SafetensorsError, words):
                    safetensors.read(path)


class ModelFiles(unittest.TestCase):
    def test_state_dict_names_are_the_convention(self):
        config = Config(alphabet=3, width=4, locality=1,
                        layers=[LayerConfig(heads=2, mlp=5), LayerConfig(heads=1)], outputs=2)
        names = set(LimitTransformer(config).state_dict())
        want = {"embedding", "positional", "readout.weight", "readout.bias"}
        for l, heads in ((0, 2), (1, 1)):
            for h in range(heads):
                want |= {f"layers.{l}.heads.{h}.{k}" for k in ("qk", "ov", "bias")}
        want |= {"layers.0.mlp.in", "layers.0.mlp.in_bias", "layers.0.mlp.out"}
        self.assertEqual(names, want)

    def test_safetensors_and_json_describe_the_same_model(self):
        rng = np.random.default_rng(2)
        torch.manual_seed(2)
        for _ in range(5):
            model = LimitTransformer(random_config(rng))
            with tempfile.TemporaryDirectory() as tmp:
                st, js = os.path.join(tmp, "m.safetensors"), os.path.join(tmp, "m.json")
                files.save_safetensors(model, st)
                files.save_json(model, js)
                a, b = files.load(st), files.load(js)
                for name, value in a.state_dict().items():
                    self.assertTrue(torch.equal(value, b.state_dict()[name]), name)
                x = torch.from_numpy(rng.integers(0, model.config.alphabet, size=(3, 17)))
                self.assertTrue(torch.equal(a(x), b(x)))
                meta = json.loads(safetensors.read(st)[1]["ltsim"])
                self.assertNotIn("embedding", meta)
                self.assertTrue(all(isinstance(layer["heads"], int) for layer in meta["layers"]))
                # ltsim reads both and evaluates them identically.
                x = f"iid:length=300,alphabet={model.config.alphabet},seed=5"
                out_st = run_ltsim("eval", st, x, "--json").stdout
                out_js = run_ltsim("eval", js, x, "--json").stdout
                self.assertEqual(json.loads(out_st)["output"], json.loads(out_js)["output"])


class Differential(unittest.TestCase):
    """PyTorch's forward against `ltsim eval` on the exported file at lengths ≤ 512."""

    def compare(self, model, rng, modes=("softmax",), label=""):
        worst = {}
        with tempfile.TemporaryDirectory() as tmp:
            strings = [rng.integers(0, model.config.alphabet, size=n) for n in LENGTHS]
            for mode in modes:
                for layer in model.config.layers:
                    layer.attention = mode
                    layer.precision_bits = 6 if mode == "finite" else None
                path = os.path.join(tmp, f"{mode}.safetensors")
                files.save_safetensors(model, path)
                reference = ltsim_batch(path, strings, tmp)
                exact = files.load(path, torch.float64)  # the file's weights, in double
                as32 = files.load(path, torch.float32)
                for x, want in zip(strings, reference):
                    xt = torch.from_numpy(np.asarray(x, dtype=np.int64))[None, :]
                    with torch.no_grad():
                        got64 = exact(xt)[0].numpy()
                        scale = 1.0 + np.abs(want).max()
                        err64 = np.abs(got64 - want).max() / scale
                        self.assertLessEqual(err64, F64_TOL, f"{label} {mode} T={len(x)}")
                        worst[(mode, 64)] = max(worst.get((mode, 64), 0.0), err64)
                        if mode == "softmax":
                            got32 = as32(xt)[0].double().numpy()
                            err32 = np.abs(got32 - want).max() / scale
                            self.assertLessEqual(err32, F32_TOL, f"{label} float32 T={len(x)}")
                            worst[(mode, 32)] = max(worst.get((mode, 32), 0.0), err32)
        for layer in model.config.layers:
            layer.attention, layer.precision_bits = "softmax", None
        return worst

    def test_random_configurations(self):
        rng = np.random.default_rng(3)
        torch.manual_seed(3)
        worst = {}
        for case in range(8):
            model = LimitTransformer(random_config(rng, layers=1 + case % 2))
            for key, value in self.compare(model, rng, ("softmax", "hardmax", "finite"),
                                           f"case {case}").items():
                worst[key] = max(worst.get(key, 0.0), value)
        print("random configurations, worst relative error:",
              {f"{m}/f{b}": f"{v:.2e}" for (m, b), v in sorted(worst.items())})

    def test_tiny_trained_checkpoints(self):
        rng = np.random.default_rng(4)
        for task in (Task("simple-task", omega=4.0), Task("kgram", alphabet=2, k=1)):
            model, _ = train(task, n=8, steps=40, batch=16, seed=0)
            untrained, _ = train(task, n=8, steps=0, seed=0)  # the same initial weights
            x = task.strings(np.random.default_rng(9), 256, 8)
            y = torch.from_numpy(task.target(x))
            with torch.no_grad():
                held_out = [float(((m(torch.from_numpy(x)).double() - y) ** 2).sum(1).mean())
                            for m in (untrained, model)]
            self.assertLess(held_out[1], held_out[0], f"{task.name}: training lowers the loss")
            worst = self.compare(model, rng, ("softmax", "hardmax"), task.name)
            print(f"trained {task.name}: worst relative error",
                  {f"{m}/f{b}": f"{v:.2e}" for (m, b), v in sorted(worst.items())})


class CommandLine(unittest.TestCase):
    def test_import_threshold_and_search_on_a_trained_model(self):
        task = Task("modp-task", p=2)
        model, _ = train(task, n=8, steps=20, batch=16, seed=1)
        with tempfile.TemporaryDirectory() as tmp:
            st = os.path.join(tmp, "trained.safetensors")
            files.save_safetensors(model, st)
            imported = os.path.join(tmp, "trained.json")
            run_ltsim("import", st, "--out", imported)
            a = run_ltsim("eval", st, "iid:length=77,alphabet=2,seed=3", "--json").stdout
            b = run_ltsim("eval", imported, "iid:length=77,alphabet=2,seed=3", "--json").stdout
            self.assertEqual(json.loads(a)["output"], json.loads(b)["output"])
            target = os.path.join(tmp, "target.json")
            run_ltsim("construct", *task.construct_args(), "--out", target)
            doc = json.loads(run_ltsim("threshold", target, st, "--eps", "0.05", "--max-length",
                                       "12", "--json").stdout)
            self.assertTrue(doc["exhaustive"])
            if doc["first_disagreement"] is not None:
                self.assertGreater(doc["gap"], 0.05)
            # The worst-string search with both models fixed: its reported gap is the gap ltsim
            # gives on the string it writes (run under the former name ltsim_torch, which
            # must keep working).
            worst_txt = os.path.join(tmp, "worst.txt")
            found = subprocess.run([sys.executable, "-m", "ltsim_torch.worst", target, st,
                                    "--length", "1000", "--rounds", "3", "--population", "4",
                                    "--out", worst_txt, "--json"],
                                   capture_output=True, text=True, check=True)
            found = json.loads(found.stdout)
            f_x = json.loads(run_ltsim("eval", target, worst_txt, "--json").stdout)
            g_x = json.loads(run_ltsim("eval", st, worst_txt, "--json").stdout)
            self.assertEqual(f_x["length"], 1000)
            self.assertAlmostEqual(max(abs(a - b) for a, b in zip(f_x["output"], g_x["output"])),
                                   found["gap"], delta=1e-12)
            self.assertEqual(found["trajectory"], sorted(found["trajectory"]))
            # Started from ltsim.profile's strings: at least its attained gap at this length,
            # at most its certified bounds there and at every length.
            bounds = found["certified"]
            self.assertGreater(found["starts_from_certified_search"], 0)
            self.assertGreaterEqual(found["gap"], bounds["length_gap_lower"] - 1e-12)
            self.assertLessEqual(found["gap"], bounds["length_gap_upper"] + 1e-12)
            self.assertLessEqual(bounds["length_gap_upper"], bounds["sup_gap_upper"] + 1e-12)
            bad = os.path.join(tmp, "bad.safetensors")
            with open(bad, "wb") as f:
                f.write(b"\x01")
            result = run_ltsim("eval", bad, "iid:length=5,alphabet=2,seed=1", check=False)
            self.assertEqual(result.returncode, 2)
            self.assertEqual(result.stderr.count("\n"), 1)
            self.assertIn(bad, result.stderr)


class Experiment(unittest.TestCase):
    def test_profiles_of_a_small_experiment(self):
        """`python -m ltsim.torch.experiment` profiles every one-layer model (ε_train, the
        supremum, their ratio as certified brackets) and says why the two-layer ones have
        none."""
        import math
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run([sys.executable, "-m", "ltsim.torch.experiment", "--out", tmp,
                            "--omegas", "4", "--primes", "2", "--alphabets", "2", "--ks", "1",
                            "--ns", "8", "--seeds", "1", "--steps", "20", "--samples", "2",
                            "--max-length", "256", "--torch-budget", "0", "--jobs", "1",
                            "--profile-length", "1024"],
                           capture_output=True, text=True, check=True)
            with open(os.path.join(tmp, "experiment.json")) as f:
                rows = json.load(f)["profiles"]["rows"]
            one = [r for r in rows if r["task"] != "kgram"]
            self.assertEqual(len(one), 2)
            self.assertTrue(all(r["profile"] is None and "two-layer" in r["reason"]
                                for r in rows if r["task"] == "kgram"))
            for r in one:
                p = r["profile"]
                # Brackets: lower ≤ upper; the supremum over every length is at least the
                # largest gap over the training lengths (certified: sup_upper ≥ train_lower).
                self.assertLessEqual(p["train_gap_lower"], p["train_gap_upper"])
                self.assertLessEqual(p["sup_gap_lower"], p["sup_gap_upper"])
                self.assertGreaterEqual(p["sup_gap_upper"], p["train_gap_lower"])
                if p["ratio_upper"] is not None and math.isfinite(p["ratio_upper"]):
                    self.assertLessEqual(p["ratio_lower"], p["ratio_upper"])
                    self.assertGreaterEqual(p["ratio_upper"], 1.0 - 1e-12)
                # The same numbers as ltsim.profile on the files the run kept.
                models = os.path.join(tmp, "models")
                target = ltsim.load_model(os.path.join(models, f"{r['task_key']}_target.json"))
                trained = ltsim.load_model(os.path.join(models, r["model"]))
                direct = ltsim.profile(target, trained, train_length=8, max_length=1024,
                                       points=12)
                self.assertEqual(direct.sup_gap_upper, p["sup_gap_upper"])
                self.assertEqual(direct.train_gap_lower, p["train_gap_lower"])
            self.assertTrue(os.path.getsize(os.path.join(tmp, "ratio_vs_n.png")) > 10000)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: test_ltsim_torch.py LTSIM_BINARY [unittest args]")
    LTSIM = sys.argv.pop(1)
    torch.set_num_threads(1)
    unittest.main(verbosity=2)
