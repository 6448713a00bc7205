"""The Python package `ltsim` against the `ltsim` command line (docs/python.md): the same
numbers for eval, threshold, certify, profile, simulate, sandwich, info, constants and fuzz over a pair; bad input raises
ltsim.InputError with the command line's one-line message; long calls release the GIL, stop
on Ctrl-C and give the same results for any thread count.

Run by CTest as `/usr/bin/python3 test_api.py LTSIM_BINARY` with PYTHONPATH=<build>/python and
the repository root as working directory.
"""

import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest

import numpy as np

import ltsim

LTSIM = None
F, G = "corpus/models/pair/f.json", "corpus/models/pair/g.json"
BUMP = "corpus/families/bump_s2.71_period2"


def cli(*args, check=True):
    result = subprocess.run([LTSIM, *args], capture_output=True, text=True)
    if check and result.returncode != 0:
        raise AssertionError(f"ltsim {' '.join(args)}: exit {result.returncode}: {result.stderr}")
    return result


def cli_json(*args):
    return json.loads(cli(*args, "--json").stdout)


class SameNumbersAsTheCommandLine(unittest.TestCase):
    def test_eval_on_arrays_runs_files_and_specs(self):
        f = ltsim.load_model(G)
        rng = np.random.default_rng(1)
        for length in (1, 2, 7, 100, 5000):
            x = rng.integers(0, 3, size=length)
            with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as out:
                out.write(" ".join(map(str, x)) + "\n")
            try:
                want = cli_json("eval", G, out.name)["output"]
                self.assertEqual(f.eval(x).tolist(), want)  # bit for bit
                self.assertEqual(f.eval(out.name).tolist(), want)
                self.assertEqual(f.eval(x.astype(np.uint8)).tolist(), want)
            finally:
                os.unlink(out.name)
        spec = "iid:length=3000000,alphabet=3,seed=4"
        self.assertEqual(f.eval(spec).tolist(), cli_json("eval", G, spec)["output"])
        runs = (np.array([0, 2, 1]), np.array([10 ** 9, 3, 10 ** 12]))
        self.assertEqual(f.eval(runs).tolist(),
                         cli_json("eval", G, "text:0^1000000000 2^3 1^1000000000000")["output"])

    def test_safetensors_and_json_load_the_same_model(self):
        f = ltsim.load_model(G)
        with tempfile.TemporaryDirectory() as tmp:
            for dtype in ("F64", "F32"):
                path = os.path.join(tmp, f"g_{dtype}.safetensors")
                f.save(path, dtype=dtype)
                back = ltsim.load_model(path)
                x = "iid:length=1000,alphabet=3,seed=2"
                self.assertEqual(back.eval(x).tolist(), cli_json("eval", path, x)["output"])
                if dtype == "F64":
                    self.assertEqual(back.to_json(), f.to_json())
            path = os.path.join(tmp, "g.json")
            f.save(path)
            self.assertEqual(ltsim.load_model(path).to_json(), f.to_json())

    def test_threshold(self):
        for f, g, eps, n in ((F, G, 0.1, 12), (F, G, 0.6, 30), (f"{BUMP}/f.json", f"{BUMP}/g.json", 0.05, 40),
                             ("corpus/models/kgram_S2_k1.json", "corpus/models/kgram_S2_k1.json", 0.0, 6)):
            want = cli_json("threshold", f, g, "--eps", str(eps), "--max-length", str(n), "--quiet")
            got = ltsim.threshold(ltsim.load_model(f), ltsim.load_model(g), eps=eps, max_length=n)
            self.assertEqual(got.first_disagreement, want["first_disagreement"])
            self.assertEqual(got.exhaustive, want["exhaustive"])
            self.assertEqual(got.checked_up_to, want["checked_up_to"])
            self.assertEqual(got.evaluations, want["evaluations"])
            self.assertEqual([None if np.isnan(v) else v for v in got.max_gap_per_length],
                             want["max_gap_per_length"])
            if want["first_disagreement"] is None:
                self.assertIsNone(got.witness)
            else:
                self.assertEqual(got.gap, want["gap"])
                runs = [[int(t), int(c)] for t, c in zip(*got.witness_runs)]
                self.assertEqual(runs, want["witness"])
                self.assertEqual(len(got.witness), got.first_disagreement)
                self.assertEqual(got.recheck["status"], want["recheck"]["status"])
            json.dumps(got.to_dict())  # plain values only

    def test_simulate_and_sandwich(self):
        f, g = ltsim.load_model(F), ltsim.load_model(G)
        x = "corpus/strings/default.txt"
        with tempfile.TemporaryDirectory() as tmp:
            for method in ("frequency", "truncate", "markov"):
                out = os.path.join(tmp, f"z_{method}.txt")
                want = cli_json("simulate", "--model", F, "--model", G, x, "--z-length", "2000",
                                "--method", method, "--seed", "3", "--out", out)
                s = ltsim.simulation((f, g), x, z_length=2000, method=method, seed=3)
                self.assertEqual(s.length, want["z_length"])
                self.assertEqual(len(s.z), s.length)
                z_text = ltsim.simulate((f, g), x, z_length=2000, method=method, seed=3)
                np.testing.assert_array_equal(z_text, s.z)
                # The CLI's z file and ours are the same string: same outputs on both.
                self.assertEqual(f.eval(s.z).tolist(), cli_json("eval", F, out)["output"])
                self.assertEqual(g.eval(s.runs).tolist(), cli_json("eval", G, out)["output"])
                want = cli_json("sandwich", F, G, x, "--z-length", "2000", "--method", method,
                                "--seed", "3")
                r = ltsim.sandwich(f, g, x, z_length=2000, method=method, seed=3)
                self.assertEqual(r.gap_x, want["gap_x"])
                self.assertEqual(r.gap_z, want["gap_z"])
                self.assertEqual(r.f.sim, want["sim_f"])
                self.assertEqual(r.g.sim, want["sim_g"])
                self.assertEqual(r.z_length, want["z_length"])
                self.assertEqual((r.holds, r.rate_holds), (want["holds"], want["rate_holds"]))
                json.dumps(r.to_dict())

    def test_one_version_everywhere(self):
        # ltsim/core/version.h is generated from CMakeLists.txt's project(); pyproject.toml
        # repeats it for pip, which reads it before any CMake runs.
        import tomllib
        root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
        with open(os.path.join(root, "pyproject.toml"), "rb") as f:
            pyproject = tomllib.load(f)["project"]["version"]
        self.assertEqual(ltsim.__version__, pyproject)
        printed = subprocess.run([LTSIM, "--version"], capture_output=True, text=True).stdout
        self.assertTrue(printed.startswith(f"ltsim {pyproject}"), printed)
        context = cli_json("threshold", F, G, "--eps", "0.1", "--max-length", "3")["context"]
        self.assertEqual(context["version"], pyproject)

    def test_info_constants_construct(self):
        for path in (G, "corpus/models/kgram_S3_k2.json", "corpus/models/modp_task_p3_k1_finite8.json"):
            want = cli_json("info", path)
            got = ltsim.load_model(path).info().to_dict()
            for key in ("alphabet", "width", "period", "locality", "layers", "heads", "outputs",
                        "logit_margin", "hardmax_length", "lipschitz", "positional_margin",
                        "log_complexity", "regimes"):
                self.assertEqual(got[key], want[key], key)
        want = cli_json("constants", F, G, "--eps", "0.01", "--z-length", "2000")
        got = ltsim.constants(ltsim.load_model(F), ltsim.load_model(G), eps=0.01, z_length=2000)
        # A bound that does not apply is NaN here and null in the CLI's JSON.
        self.assertEqual({b.name: (None if math.isnan(b.value) else b.value) for b in got.bounds},
                         {b["name"]: b["value"] for b in want["bounds"]})
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "m.json")
            cli("construct", "modp-task", "--p", "3", "--k", "1", "--out", out)
            self.assertEqual(ltsim.construct("modp-task", p=3, k=1).to_json(),
                             ltsim.load_model(out).to_json())
            family_dir = os.path.join(tmp, "family")
            cli("construct", "family", "bump", "--out-dir", family_dir)
            member = ltsim.family("bump")
            for role, model in (("f", member.f), ("g", member.g)):
                path = os.path.join(family_dir, f"{role}.json")
                self.assertEqual(model.to_json(), ltsim.load_model(path).to_json())
            r = ltsim.threshold(member.f, member.g, eps=member.eps,
                                max_length=member.first_disagreement)
            self.assertEqual(r.first_disagreement, member.first_disagreement)


class BadInput(unittest.TestCase):
    def assert_one_line(self, error, *words):
        message = str(error.exception)
        self.assertIsInstance(error.exception, ValueError)
        self.assertNotIn("\n", message)
        for word in words:
            self.assertIn(word, message)

    def test_errors_are_input_errors_with_the_cli_message(self):
        with tempfile.TemporaryDirectory() as tmp:
            bad = os.path.join(tmp, "bad.json")
            with open(bad, "w") as out:
                out.write('{"format": "ltsim-model", "version": 1, "alphabet": 2,}')
            want = cli("eval", bad, "text:0", check=False).stderr.strip()
            with self.assertRaises(ltsim.InputError) as e:
                ltsim.load_model(bad)
            self.assertIn(str(e.exception), want)
        f, g = ltsim.load_model(F), ltsim.load_model(G)
        with self.assertRaises(ltsim.InputError) as e:
            f.eval(np.array([0, 1, 7]))
        self.assert_one_line(e, "7")
        for x in (np.array([0, -1]), np.array([0, 70000]), np.array([[0, 1]]), np.array([0.5]),
                  np.array([], dtype=np.int64), "no/such/file.txt", "iid:length=5", object(),
                  (np.array([0, 1]), np.array([1, 0]))):
            with self.assertRaises(ltsim.InputError) as e:
                f.eval(x)
            self.assert_one_line(e)
        with self.assertRaises(ltsim.InputError) as e:
            ltsim.threshold(f, g, eps=float("nan"), max_length=5)
        self.assert_one_line(e, "eps")
        with self.assertRaises(ltsim.InputError) as e:
            ltsim.threshold(f, g, eps=0.1, max_length=0)
        self.assert_one_line(e, "max_length")
        with self.assertRaises(ltsim.InputError) as e:
            ltsim.threshold(f, ltsim.load_model("corpus/models/modp_task_p3_k1.json"), 0.1, 5)
        self.assert_one_line(e, "alphabet")
        with self.assertRaises(ltsim.InputError) as e:
            ltsim.simulate(f, "text:0 1 0", z_length=1, method="frequency")
        self.assert_one_line(e, "z_length")
        with self.assertRaises(ltsim.InputError) as e:
            ltsim.simulate(f, "text:0 1 0", z_length=10, method="frequencyy")
        self.assert_one_line(e, "frequency")
        with self.assertRaises(ltsim.InputError) as e:
            ltsim.construct("modp-task", p=3, k=3)
        self.assert_one_line(e, "k 3")
        with self.assertRaises(ltsim.InputError):
            ltsim.family("bump", slope=-1)
        with self.assertRaises(ltsim.InputError):
            f.save("/nonexistent-dir/f.json")


class LongCalls(unittest.TestCase):
    def test_progress_ctrl_c_and_gil(self):
        f = ltsim.load_model(G)
        spec = "iid:length=400000000,alphabet=3,seed=1"
        seen = []
        # A callback that raises stops the call with its exception.
        with self.assertRaises(ZeroDivisionError):
            f.eval(spec, progress=lambda done, total: seen.append(done) or (len(seen) > 3 and 1 / 0))
        self.assertEqual(len(seen), 4)
        # Ctrl-C (SIGINT to this process) during a long evaluation: KeyboardInterrupt soon.
        timer = threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT))
        start = time.perf_counter()
        timer.start()
        with self.assertRaises(KeyboardInterrupt):
            f.eval(spec)
        self.assertLess(time.perf_counter() - start, 5.0)
        # The GIL is released: another thread runs while eval computes.
        ticks = []
        stop = threading.Event()

        def tick():
            while not stop.is_set():
                ticks.append(1)
                time.sleep(0.001)
        thread = threading.Thread(target=tick)
        thread.start()
        f.eval("iid:length=30000000,alphabet=3,seed=1")
        stop.set()
        thread.join()
        self.assertGreater(len(ticks), 10)

    def test_threshold_interrupt_and_threads(self):
        f, g = ltsim.load_model(f"{BUMP}/f.json"), ltsim.load_model(f"{BUMP}/g.json")
        calls = []

        def progress(done, total):
            calls.append((done, total))
            raise KeyboardInterrupt
        with self.assertRaises(KeyboardInterrupt):
            ltsim.threshold(f, g, eps=0.05, max_length=40, progress=progress)
        self.assertEqual(len(calls), 1)
        one = ltsim.threshold(f, g, eps=0.05, max_length=40, threads=1).to_dict()
        two = ltsim.threshold(f, g, eps=0.05, max_length=40, threads=2).to_dict()
        one.pop("threads"), two.pop("threads")
        self.assertEqual(one, two)

    def test_fuzz_over_a_pair(self):
        f, g = ltsim.load_model(F), ltsim.load_model(G)
        a = ltsim.fuzz(f, g, cases=6, lengths=(1000, 2000), z_lengths=(300, 500), threads=1)
        b = ltsim.fuzz(f, g, cases=6, lengths=(1000, 2000), z_lengths=(300, 500), threads=2)
        self.assertEqual(json.dumps(a.to_dict()), json.dumps(b.to_dict()))
        self.assertEqual(len(a.cases), 6)
        self.assertIn("sandwich", a.summary)
        for case in a.cases:
            self.assertLessEqual(case.gap_x, case.sim_f + case.gap_z + case.sim_g + 1e-12)

    def test_fuzz_over_a_pair_draws_the_cases_of_fuzz_pair(self):
        # One drawing function: ltsim.fuzz's case i is `ltsim fuzz --pair`'s case i.
        f, g = ltsim.load_model(F), ltsim.load_model(G)
        got = ltsim.fuzz(f, g, cases=5, seed=4, lengths=(1000, 2000), z_lengths=(300, 500))
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "run")
            cli("fuzz", "--pair", F, G, "--cases", "5", "--seed", "4", "--min-x-length", "1000",
                "--max-x-length", "2000", "--min-z-length", "300", "--max-z-length", "500",
                "--out-dir", out)
            with open(os.path.join(out, "cases.jsonl")) as lines:
                want = [json.loads(line) for line in lines]
        self.assertEqual(len(want), 5)
        for case, line in zip(got.cases, want):
            self.assertEqual(case.method, line["method"])
            self.assertEqual(case.z_length, line["z_length"])
            self.assertEqual(case.input["kind"], line["cell"]["input"])
            self.assertEqual(case.gap_x, line["gap_x"])
            self.assertEqual(sorted(case.properties), sorted(line["properties"]))

    def test_certify(self):
        for f, g, eps in ((f"{BUMP}/f.json", f"{BUMP}/g.json", 0.05), (F, G, 0.1), (F, F, 1e-6)):
            want = json.loads(cli("certify", f, g, "--eps", str(eps), "--quiet", "--json",
                                  check=False).stdout)
            got = ltsim.certify(ltsim.load_model(f), ltsim.load_model(g), eps=eps)
            self.assertEqual(got.verdict, want["verdict"])
            self.assertEqual(got.first_disagreement, want["first_disagreement"])
            self.assertEqual(got.exact_up_to, want["exact_up_to"])
            self.assertEqual(got.boxes, want["boxes"])
            self.assertEqual(got.sup_gap_lower, want["sup_gap_lower"])
            if want["sup_gap_upper"] is not None:
                self.assertEqual(got.sup_gap_upper, want["sup_gap_upper"])
            if got.witness is not None:
                self.assertEqual(len(got.witness), got.first_disagreement)
            json.dumps(got.to_dict())  # plain values only
        with self.assertRaises(ltsim.InputError):
            two = ltsim.load_model("corpus/models/kgram_S2_k1.json")
            ltsim.certify(two, two, eps=0.1)
        with self.assertRaises(ltsim.InputError) as error:
            ltsim.certify(ltsim.load_model(F), ltsim.load_model(G), eps=-1)
        self.assertIn("eps", str(error.exception))

    def test_profile(self):
        f, g = f"{BUMP}/f.json", f"{BUMP}/g.json"
        want = json.loads(cli("profile", f, g, "--train-length", "16", "--max-length", "1000",
                              "--points", "5", "--quiet", "--json").stdout)
        got = ltsim.profile(ltsim.load_model(f), ltsim.load_model(g), train_length=16,
                            max_length=1000, points=5)
        self.assertEqual([int(t) for t in got.lengths], want["lengths"])
        self.assertEqual(got.gap_lower.tolist(), want["gap_lower"])
        self.assertEqual(got.gap_upper.tolist(), want["gap_upper"])
        for key in ("train_gap_lower", "train_gap_upper", "sup_gap_lower", "sup_gap_upper",
                    "ratio_lower", "ratio_upper", "sup_status", "certify_runs"):
            if want[key] is None:  # the CLI writes ±∞ and NaN as null
                self.assertFalse(math.isfinite(getattr(got, key)), key)
            else:
                self.assertEqual(getattr(got, key), want[key], key)
        # Each length's witness attains its lower bound (the exact evaluator, through eval).
        fm, gm = ltsim.load_model(f), ltsim.load_model(g)
        with_witness = [i for i, w in enumerate(got.witness_runs) if w is not None]
        self.assertIn(len(got.lengths) - 1, with_witness)
        for i in with_witness:
            tokens, counts = got.witness_runs[i]
            x = np.repeat(tokens, counts.astype(np.int64))
            self.assertEqual(len(x), int(got.lengths[i]))
            self.assertAlmostEqual(float(np.max(np.abs(fm.eval(x) - gm.eval(x)))),
                                   float(got.gap_lower[i]), delta=1e-12)
        json.dumps(got.to_dict())  # plain values only
        with self.assertRaises(ltsim.InputError) as error:
            ltsim.profile(fm, gm, train_length=16, max_length=8)
        self.assertIn("max_length", str(error.exception))


class Torch(unittest.TestCase):
    def test_round_trip_with_ltsim_torch(self):
        try:
            import torch
        except ImportError:
            self.skipTest("no torch")
        from ltsim.torch import Config, LayerConfig, LimitTransformer
        torch.manual_seed(3)
        module = LimitTransformer(Config(alphabet=3, width=4, period=2, locality=1,
                                         layers=[LayerConfig(heads=2, mlp=3)])).double()
        model = ltsim.Model.from_torch(module, cast="F64")
        x = np.random.default_rng(2).integers(0, 3, size=50)
        want = module(torch.tensor(x[None, :]), attention="softmax").detach().numpy()[0]
        # Both in double, different summation orders over 50 keys.
        np.testing.assert_allclose(model.eval(x), want, rtol=1e-12, atol=1e-12)
        back = model.to_torch()
        np.testing.assert_allclose(back(torch.tensor(x[None, :])).detach().numpy()[0], want,
                                   rtol=1e-12, atol=1e-12)


if __name__ == "__main__":
    LTSIM = sys.argv.pop(1)
    unittest.main(verbosity=2)
