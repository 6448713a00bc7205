#!/usr/bin/env python3
"""Runs a few hundred malformed invocations of each input class against an ltsim binary and
counts how each ends (a repeatable attack on every reader): clean (exit 2, one line on stderr
naming the file, key or flag), crash (a signal, a sanitizer report, an internal check),
hang (over --timeout seconds), accepted (exit 0 or 1 although the input is malformed),
unclear (exit 2 but not one clean line), lost (a file outside the run changed, an output
directory holding a mix of two runs, a campaign that can no longer be resumed) and memory
(peak RSS over 1 GiB).

The classes of files that steer or are shared: `steer` (shards whose stored command is not
a sharded run), `shards` (single-byte corruptions of real shards, and records re-encoded
with valid digests), `strings-change` (a string file rewritten in place or swapped by rename
while ltsim reads it: a run must end with a correct answer or a clean error, never a mix),
`sets` (output directories whose writer is killed at a random moment: the directory must
hold the old set or the new one), `concurrent` (two runs into one directory at once).

Every input is malformed by construction: values of the wrong type or out of range where
the format constrains them, missing or unknown or duplicate keys, truncated or too deeply
nested text, numbers that overflow a double. Usage:

    tools/malformed_inputs.py --ltsim build/tools/ltsim/ltsim [--per-class 200] [--seed 1]
"""
import argparse
import copy
import json
import os
import random
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GIB = 1 << 30


def run_one(cmd, timeout, env, cwd, stdout=None):
    """(exit code or -signal, stderr text, peak RSS in bytes, hung) of one invocation;
    `stdout`, a path, receives the standard output."""
    out = open(stdout, "wb") if stdout else subprocess.DEVNULL
    proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.PIPE, env=env,
                            cwd=cwd, start_new_session=True)
    chunks = []
    reader = threading.Thread(target=lambda: chunks.append(proc.stderr.read()))
    reader.start()
    deadline = time.time() + timeout
    hung = False
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid == proc.pid:
            break
        if time.time() > deadline:
            hung = True
            os.killpg(proc.pid, signal.SIGKILL)
            pid, status, usage = os.wait4(proc.pid, 0)
            break
        time.sleep(0.01)
    reader.join()
    if stdout:
        out.close()
    proc.returncode = 0  # reaped by wait4: keep Popen from waiting again
    code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
    err = b"".join(c for c in chunks if c).decode("utf-8", "replace")
    return code, err, usage.ru_maxrss * 1024, hung


def classify(code, err, hung, names):
    text = err.strip()
    if hung:
        return "hang"
    if code < 0 or code >= 128 or "Sanitizer" in err or "runtime error:" in err \
            or "internal check failed" in err:
        return "crash"
    if code in (0, 1):
        return "accepted"
    if code == 2 and text and "\n" not in text and "unexpected error" not in text \
            and any(n in text for n in names):
        return "clean"
    return "unclear"


# ---------------------------------------------------------------- JSON mutations
WRONG_TYPES = ["\"text\"", "null", "true", "[]", "{}"]
BAD_INTS = ["-1", "2.5", "1e30", "1e400", "99999999999999999999", "\"3\"", "0.5", "-3"]


def paths(doc, prefix=()):
    """Every (path, value) of a document, depth first."""
    yield prefix, doc
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from paths(v, prefix + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from paths(v, prefix + (i,))


def set_raw(doc, path, raw):
    """The document's text with the value at `path` replaced by the raw JSON text `raw`."""
    marker = "\u0001MARK\u0001"
    d = copy.deepcopy(doc)
    target = d
    for p in path[:-1]:
        target = target[p]
    target[path[-1]] = marker
    return json.dumps(d, indent=1).replace(json.dumps(marker), raw)


def delete(doc, path):
    d = copy.deepcopy(doc)
    target = d
    for p in path[:-1]:
        target = target[p]
    del target[path[-1]]
    return json.dumps(d, indent=1)


def json_mutants(doc, rng, count, int_keys, number_ok, required, skip):
    """`count` texts each malformed in one way. int_keys: keys holding constrained integers;
    number_ok(path): whether any finite number is valid there; required(path): a key that
    must be present; skip(path): free-form parts (meta) where anything is valid."""
    items = [(p, v) for p, v in paths(doc) if p and not skip(p)]
    out = []
    text = json.dumps(doc, indent=1)
    while len(out) < count:
        kind = rng.randrange(10)
        p, v = rng.choice(items)
        key = p[-1]
        if kind == 0:  # wrong type where a number is
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                out.append(set_raw(doc, p, rng.choice(WRONG_TYPES)))
        elif kind == 1:  # bad integers
            if isinstance(key, str) and key in int_keys:
                out.append(set_raw(doc, p, rng.choice(BAD_INTS)))
        elif kind == 2:  # a number too large for a double anywhere a number is
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                out.append(set_raw(doc, p, rng.choice(["1e400", "-1e400", "1e999999"])))
        elif kind == 3:  # missing key
            if isinstance(key, str) and required(p):
                out.append(delete(doc, p))
        elif kind == 4:  # unknown key
            if isinstance(v, dict):
                out.append(set_raw(doc, p, json.dumps(dict(v, **{"bogus_key": 1}))))
        elif kind == 5:  # truncated text (cut strictly inside)
            cut = rng.randrange(1, max(2, len(text.rstrip()) - 1))
            out.append(text[:cut])
        elif kind == 6:  # deep nesting under any key
            depth = rng.choice([100, 10000, 200000])
            out.append(set_raw(doc, p, "[" * depth + "]" * depth))
        elif kind == 7:  # duplicate key
            if isinstance(v, dict) and v:
                k0 = next(iter(v))
                raw = json.dumps(v)
                raw = "{" + json.dumps(k0) + ": " + json.dumps(v[k0]) + ", " + raw[1:]
                out.append(set_raw(doc, p, raw))
        elif kind == 8:  # a string or a structure where a string is
            if isinstance(v, str):
                out.append(set_raw(doc, p, rng.choice(["1", "[]", "{}", "null", "\"" + "x" * 60000 + "\""])))
        elif kind == 9:  # garbage bytes inside
            cut = rng.randrange(1, len(text) - 1)
            mutant = text[:cut] + rng.choice(["\x00", "}", "]]", "@", "\ufffd", ",,"]) + text[cut:]
            try:
                json.loads(mutant)  # landed inside a string literal: still a valid document
            except ValueError:
                out.append(mutant)
    return out


# ---------------------------------------------------------------- classes
MODEL_INTS = {"alphabet", "width", "period", "locality", "precision_bits", "version"}


def model_required(p):
    return p[-1] in {"format", "version", "alphabet", "width", "period", "locality",
                     "embedding", "positional", "layers", "readout", "attention", "heads",
                     "qk", "ov", "bias", "weight", "in", "in_bias", "out"} or isinstance(p[-1], int)


def model_skip(p):
    return "meta" in p or "name" in p


def model_case_files(rng, per_class, work):
    base = json.load(open(os.path.join(ROOT, "corpus/models/pair/f.json")))
    texts = json_mutants(base, rng, per_class - 20, MODEL_INTS, None, model_required, model_skip)
    # Shapes and sizes: huge dimensions in small files, extreme weights.
    for raw in ["1000000000", "65536", "0", "-5"]:
        for key in ["width", "alphabet", "period", "locality"]:
            if not (key == "locality" and raw == "0"):  # τ = 0 is valid
                texts.append(set_raw(base, (key,), raw))
    for raw in ["1e308", "-1e308", "1.7976931348623157e308"]:
        texts.append(set_raw(base, ("layers", 0, "heads", 0, "qk", 0, 0), raw))
    texts = texts[:per_class]
    files = []
    for i, t in enumerate(texts):
        path = os.path.join(work, f"model{i}.json")
        open(path, "w", encoding="utf-8", errors="surrogatepass").write(t)
        files.append(path)
    files += ["/dev/zero", work]  # a device and a directory
    return files


def invocations_models(args, rng, work):
    good = os.path.join(ROOT, "corpus/models/pair/g.json")
    x = os.path.join(ROOT, "corpus/strings/default.txt")
    out = []
    for i, m in enumerate(model_case_files(rng, args.per_class, work)):
        cmd = [["info", m, "--json"], ["eval", m, "iid:length=100,alphabet=2,seed=1"],
               ["sandwich", m, good, x, "--length", "50"]][i % 3]
        out.append((cmd, [m]))
    return out


def invocations_strings(args, rng, work):
    model = os.path.join(ROOT, "corpus/models/pair/f.json")
    bad_text = ["0 1 2 x", "0^0", "0^-1", "0^18446744073709551616", "0^99999999999999999999999",
                "^3", "0^", "0^3^4", "1 0 7", "65535", "-1", "0x1", "1e3", "", "   # only a comment",
                "0\x001", "0^1.5", "3^3", "\ufeff0 1", "0^" + "9" * 400]
    # Texts that are malformed only as a whole string (an empty one): never after valid lines.
    whole_only = {"", "   # only a comment"}
    bad_iid = ["iid:", "iid:length=0,alphabet=2,seed=1", "iid:length=-1,alphabet=2,seed=1",
               "iid:length=10,alphabet=0,seed=1", "iid:length=10,alphabet=2,seed=-1",
               "iid:length=10,alphabet=2", "iid:length=10,alphabet=2,seed=1,",
               "iid:length=10,alphabet=2,seed=1,probs=1/2/3", "iid:length=10,alphabet=2,seed=1,probs=-1/2",
               "iid:length=10,alphabet=2,seed=1,probs=nan/1", "iid:length=1e400,alphabet=2,seed=1",
               "iid:length=10,alphabet=2,seed=1,bogus=3", "iid:length=10,length=10,alphabet=2,seed=1",
               "iid:length=0x10,alphabet=2,seed=1", "iid:length=10,alphabet=99999,seed=1",
               "iid:length=10,alphabet=2,seed=1,probs=0/0", "iid:length= 10,alphabet=2,seed=1",
               "iid:length=99999999999999999999,alphabet=2,seed=1"]
    out = []
    i = 0
    while len(out) < args.per_class:
        form = i % 4
        if form == 0:
            t = rng.choice(bad_text)
            if t not in whole_only and rng.random() < 0.5:
                t = "0 1 0^5\n" * rng.randrange(1, 50) + t
            path = os.path.join(work, f"s{i}.txt")
            open(path, "w", encoding="utf-8", errors="surrogatepass").write(t)
            spec = path
        elif form == 1:
            path = os.path.join(work, f"s{i}.u8")
            open(path, "wb").write(bytes([rng.choice([0, 1])] * rng.randrange(0, 20) + [rng.randrange(3, 256)]))
            spec = path
        elif form == 2:
            path = os.path.join(work, f"s{i}.u16")
            n = rng.randrange(0, 20)
            data = b"".join(int(rng.choice([0, 1])).to_bytes(2, "little") for _ in range(n))
            data += rng.choice([int(rng.randrange(3, 65536)).to_bytes(2, "little"), b"\x01"])
            open(path, "wb").write(data)
            spec = path
        else:
            spec = rng.choice(bad_iid)
            if "alphabet=2" in spec and rng.random() < 0.3:
                spec = spec.replace("alphabet=2", "alphabet=4")  # outside the model's alphabet (3)
            if spec == "iid:length=10,alphabet=4,seed=1":
                spec = spec + ",probs=1/1"
        # A .u8/.u16 token is malformed only against a model's alphabet: those go to eval.
        use_eval = i % 2 == 0 or form in (1, 2)
        cmd = ["eval", model, spec] if use_eval else ["generate", spec, "--out", os.path.join(work, "gen_out.txt")]
        out.append((cmd, [spec.split(":")[0] if spec.startswith("iid:") else spec, "iid"]))
        i += 1
    return out


WITNESS_INTS = {"version", "case", "seed", "target_length", "block_length", "sim_seed",
                "function_seed", "length", "alphabet", "parents", "pattern", "n"}


def witness_required(p):
    return p[-1] in {"format", "version", "property", "case", "case_spec", "f", "g", "input",
                     "method", "target_length", "sim_seed", "kind", "length", "alphabet",
                     "objective", "eps", "n", "x"} or model_required(p)


def witness_skip(p):
    # Informational parts a reader does not interpret.
    return model_skip(p) or p[0] in {"replay", "observed", "bound", "numbers", "z", "recheck",
                                     "stored", "history", "note", "objective_value"}


def invocations_witnesses(args, rng, work, search):
    names = sorted(f for f in os.listdir(os.path.join(ROOT, "corpus/witnesses"))
                   if f.endswith(".search.json" if search else ".witness.json"))
    out = []
    docs = [json.load(open(os.path.join(ROOT, "corpus/witnesses", n))) for n in names]
    per = args.per_class // len(docs) + 1
    k = 0
    for doc in docs:
        texts = json_mutants(doc, rng, per, WITNESS_INTS, None, witness_required, witness_skip)
        # Semantic mismatches that can never run (defect 6).
        if not search:
            for key, raw in [("method", "\"bogus\""), ("target_length", "0")]:
                texts.append(set_raw(doc, ("case_spec", key), raw))
            texts.append(set_raw(doc, ("case_spec", "input", "alphabet"), "60000"))
            texts.append(set_raw(doc, ("case_spec", "input", "length"), "200000000"))
        for t in texts:
            path = os.path.join(work, f"w{k}.json")
            k += 1
            open(path, "w", encoding="utf-8", errors="surrogatepass").write(t)
            out.append(((["search", "--replay", path] if search else ["replay", path]), [path]))
    return out[:args.per_class]


CAMPAIGN_INTS = {"seed", "cases", "min_length", "max_length", "min_target", "max_target",
                 "max_alphabet", "max_width", "max_period", "max_locality", "max_heads"}


def invocations_campaigns(args, rng, work, ltsim, env):
    base = os.path.join(work, "campaign_base")
    subprocess.run([ltsim, "fuzz", "--seed", "1", "--cases", "3", "--threads", "1", "--min-length",
                    "100", "--max-length", "200", "--min-target", "20", "--max-target", "40",
                    "--out", base], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    options = json.load(open(os.path.join(base, "campaign.json")))
    lines = open(os.path.join(base, "cases.jsonl")).read().splitlines()
    texts = json_mutants(options, rng, args.per_class // 2, CAMPAIGN_INTS, None,
                         lambda p: isinstance(p[-1], str), lambda p: False)
    for key in ["modes", "pairs", "inputs", "layers", "methods"]:
        texts.append(set_raw(options, (key,), "[]"))
    for key, raw in [("methods", "[\"bogus\"]"), ("epsilon", "-1"), ("delta", "1e308"),
                     ("max_alphabet", "0"), ("max_width", "0"), ("max_period", "0"),
                     ("max_heads", "0"), ("max_locality", "-5"), ("cases", "1e30"),
                     ("cases", "2.5"), ("seed", "-3"), ("min_target", "0"),
                     ("min_length", "5000"), ("max_length", "50")]:  # each against the other bound
        texts.append(set_raw(options, (key,), raw))
    out = []
    for i, t in enumerate(texts):
        d = os.path.join(work, f"c{i}")
        shutil.copytree(base, d)
        open(os.path.join(d, "campaign.json"), "w", encoding="utf-8", errors="surrogatepass").write(t)
        out.append((["fuzz", "--resume", d], [d]))
    # Corrupt complete lines of cases.jsonl (a torn last line is cut, as it should be).
    line0 = json.loads(lines[0])
    bad_lines = ["{}", "[]", "null", "{\"case\": -1}", "not json", json.dumps(dict(line0, case="x")),
                 json.dumps(dict(line0, properties=[])), "{\"case\": 1e400}",
                 "[" * 100000 + "]" * 100000, json.dumps({k: v for k, v in line0.items() if k != "cell"})]
    i = 0
    while len(out) < args.per_class:
        d = os.path.join(work, f"cl{i}")
        shutil.copytree(base, d)
        mutated = list(lines)
        mutated[rng.randrange(len(mutated))] = bad_lines[i % len(bad_lines)]
        open(os.path.join(d, "cases.jsonl"), "w").write("\n".join(mutated) + "\n")
        out.append((["fuzz", "--resume", d], [d]))
        i += 1
    # Not a campaign: a directory where campaign.json should be, a missing directory.
    d = os.path.join(work, "cdir")
    os.makedirs(os.path.join(d, "campaign.json"), exist_ok=True)
    out.append((["fuzz", "--resume", d], [d]))
    return out[:args.per_class + 1]


def invocations_flags(args, rng, work):
    f = os.path.join(ROOT, "corpus/models/pair/f.json")
    g = os.path.join(ROOT, "corpus/models/pair/g.json")
    x = "iid:length=1000,alphabet=2,seed=1"
    out_dir = os.path.join(work, "flags_out")
    # "010" is ten (decimal, never octal) by design, so it is not in this list.
    bad_uint = ["-1", "-3", "1.5", "nan", "99999999999999999999", "0x10", "", "abc", "1e3", "inf"]
    bad_real = ["nan", "-1", "inf", "-inf", "1e400", "abc", ""]
    commands = [
        (["simulate", "--method", "frequency", "--model", f, x, "--out", os.path.join(work, "z.txt")],
         {"--length": bad_uint + ["0"], "--seed": bad_uint, "--block-length": bad_uint}, {"--length": "10"}),
        (["sandwich", f, g, x], {"--length": bad_uint + ["0"], "--seed": bad_uint, "--block-length": bad_uint,
                                  "--method": ["bogus", ""]}, {"--length": "10"}),
        (["statistic", x, "--method", "markov", "--lipschitz", "1"],
         {"--length": bad_uint + ["0"], "--seed": bad_uint, "--locality": bad_uint, "--alphabet": bad_uint + ["0"]},
         {"--length": "10"}),
        # --eps 0 is valid (ε ≥ 0: any difference is a disagreement).
        (["threshold", f, g], {"--eps": bad_real, "--max-length": bad_uint + ["0"], "--seed": bad_uint,
                               "--samples": bad_uint}, {"--eps": "0.1", "--max-length": "4"}),
        # --n and --T are real lengths (the bounds are evaluated at any n > 0).
        (["constants", f], {"--eps": bad_real + ["0", "1"], "--n": bad_real + ["0"], "--T": bad_real,
                            "--alpha0": bad_real, "--bound": ["1/0", "", "((", "foo"], "--set": ["x", "=1", "a=nan"]}, {}),
        (["fuzz", "--out", out_dir], {"--cases": bad_uint, "--seed": bad_uint, "--threads": bad_uint + ["70000"],
                                      "--time-budget": bad_real, "--eps": bad_real, "--lemma-constant": bad_real,
                                      "--delta": bad_real, "--min-length": bad_uint, "--max-target": bad_uint,
                                      "--modes": ["bogus"], "--layers": ["3", "0"], "--methods": ["bogus"]},
         {"--cases": "1", "--max-length": "300", "--min-length": "200", "--min-target": "10", "--max-target": "20"}),
        (["search", "--objective", "sim-ratio"], {"--restarts": bad_uint, "--iterations": bad_uint, "--seed": bad_uint,
                                                  "--threads": bad_uint + ["70000"], "--eps": bad_real, "--step": bad_real,
                                                  "--n": bad_uint, "--x-length": bad_uint},
         {"--restarts": "1", "--iterations": "2", "--x-length": "50", "--n": "10"}),
        (["sweep", "--parameter", "alphabet"], {"--values": ["0x10", "1,,2", "nan", "-1", "", "1e400"], "--pairs": bad_uint,
                                                "--seed": bad_uint, "--threads": bad_uint + ["70000"], "--eps": bad_real},
         {"--values": "2,3", "--pairs": "1", "--iterations": "1", "--x-length": "100"}),
        (["experiment", "paper"], {"--primes": ["4", "0", "-2", "x"], "--omegas": ["nan", "-1", "0"], "--seeds": bad_uint,
                                   "--eps": bad_real, "--seed": bad_uint}, {"--omegas": "1", "--primes": "2", "--alphabets": "2",
                                                                           "--ks": "1", "--seeds": "1", "--kgram-seeds": "1", "--x-length": "100"}),
        (["construct", "simple-task", "--out", os.path.join(work, "m.json")], {"--omega": bad_real + ["0", "1e6"]}, {"--omega": "1"}),
        (["construct", "modp-task", "--out", os.path.join(work, "m.json")], {"--p": bad_uint + ["0"], "--k": bad_uint}, {"--p": "3", "--k": "1"}),
        (["construct", "kgram", "--out", os.path.join(work, "m.json")], {"--alphabet": bad_uint + ["0"], "--k": bad_uint,
                                                                          "--scale": bad_real}, {"--alphabet": "2", "--k": "1"}),
        (["eval", f], {"STRING": ["iid:length=10,alphabet=4,seed=1", "/nonexistent"]}, {}),
        (["generate", x], {"--out": [x.replace(":", "_") + "/nonexistent/dir/o.txt", work]}, {}),
    ]
    out = []
    for base, bad, good in commands:
        for flag, values in bad.items():
            for v in values:
                cmd = list(base)
                for k, gv in good.items():
                    if k != flag:
                        cmd += [k, gv]
                if flag == "STRING":
                    cmd += [v]
                else:
                    cmd += [flag, v]
                out.append((cmd, [flag.lstrip("-"), flag, "--", v[:20] if v else flag]))
    # generate X --out X (defect 5): the input must survive.
    keep = os.path.join(work, "keep.txt")
    out.append((["generate", keep, "--out", keep], [keep]))
    rng.shuffle(out)
    return out[:max(args.per_class, len(out))]



# ---------------------------------------------------------------- shards (docs/distributed.md §4.1)
MASK = (1 << 64) - 1


def mix64(x):
    x = (x + 0x9e3779b97f4a7c15) & MASK
    x = ((x ^ (x >> 30)) * 0xbf58476d1ce4e5b9) & MASK
    x = ((x ^ (x >> 27)) * 0x94d049bb133111eb) & MASK
    return x ^ (x >> 31)


def digest64(data, seed=0):
    """include/ltsim/core/digest.h: 8-byte little-endian words through Mix64, the length last."""
    h = mix64(seed ^ 0x6c7473696d646967)
    full = len(data) // 8 * 8
    for i in range(0, full, 8):
        h = mix64(h ^ int.from_bytes(data[i:i + 8], "little"))
    if len(data) > full:
        h = mix64(h ^ int.from_bytes(data[full:], "little"))
    return mix64(h ^ mix64(len(data)))


MAGIC = b"ltsim-shard\n"


def parse_shard(data):
    body = data[len(MAGIC):]
    at = 0

    def take(n):
        nonlocal at
        out = body[at:at + n]
        at += n
        return out
    u64 = lambda: int.from_bytes(take(8), "little")
    header = json.loads(take(u64()))
    records = []
    for _ in range(u64()):
        deal = int.from_bytes(take(4), "little")
        index = u64()
        item = take(u64())
        u64()
        records.append([deal, index, item])
    return header, records


def write_shard(header, records):
    """A shard with every digest recomputed (what anyone can do: the digests hold no secret)."""
    text = json.dumps(header, separators=(",", ":")).encode()
    bound = digest64(text)
    out = bytearray(len(text).to_bytes(8, "little") + text + len(records).to_bytes(8, "little"))
    for deal, index, item in records:
        key = deal.to_bytes(4, "little") + index.to_bytes(8, "little")
        out += key + len(item).to_bytes(8, "little") + item
        out += digest64(key + item, bound).to_bytes(8, "little")
    out += digest64(bytes(out)).to_bytes(8, "little")
    return MAGIC + bytes(out)


def make_shards(ltsim, env, work):
    f = os.path.join(ROOT, "corpus/models/pair/f.json")
    g = os.path.join(ROOT, "corpus/models/pair/g.json")
    fuzz = os.path.join(work, "fuzz.ltsim-shard")
    subprocess.run([ltsim, "fuzz", "--seed", "5", "--cases", "6", "--min-x-length", "100",
                    "--max-x-length", "200", "--min-z-length", "20", "--max-z-length", "40",
                    "--out-dir", os.path.join(work, "merged"), "--shard", "0/1", "--shard-out", fuzz],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=work)
    threshold = os.path.join(work, "threshold.ltsim-shard")
    subprocess.run([ltsim, "threshold", f, g, "--eps", "0.1", "--max-length", "6", "--no-prune",
                    "--shard", "0/1", "--shard-out", threshold],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=work)
    return fuzz, threshold


def invocations_steer(args, rng, work, ltsim, env):
    """Shards whose stored command is not a sharded run: merge must refuse them all."""
    _, threshold = make_shards(ltsim, env, work)
    header, records = parse_shard(open(threshold, "rb").read())
    victim = os.path.join(work, "victim.txt")
    f = os.path.join(ROOT, "corpus/models/pair/f.json")
    commands = [["generate", "text:0 1 0", "--out", victim], ["merge", "SELF"], ["merge"],
                ["fuzz", "--resume", work], ["fuzz", "--cases", "3", "--out-dir", work, "--time-budget", "1"],
                ["fuzz", "--case", "1"], ["search", "--replay", victim], ["sweep", "--shard", "0/1"],
                ["threshold", f, f, "--shard-out", victim], ["import", f, "--out", victim],
                ["construct", "kgram", "--alphabet", "2", "--k", "1", "--out", victim],
                ["simulate", "--method", "frequency", "--model", f, "text:0 1", "--out", victim],
                ["info", f], ["eval", f, "text:0 1"], ["--version"], ["help"], [], [""],
                ["threshold", "--help"], ["fuzz", "--time-budget=2", "--out-dir", work],
                ["generate\n\x1b[2J", "x"], ["x" * 100000]]
    out = []
    k = 0
    while len(out) < args.per_class:
        command = list(commands[k % len(commands)])
        path = os.path.join(work, f"steer{k}.ltsim-shard")
        command = [path if w == "SELF" else w for w in command]
        h = dict(header, command=command)
        open(path, "wb").write(write_shard(h, records))
        out.append((["merge", path], [path], lambda: open(victim).read() != "keep" if os.path.exists(victim) else True))
        k += 1
    open(victim, "w").write("keep")
    return out


def invocations_shards(args, rng, work, ltsim, env):
    """Corrupted shards (one byte changed, cut or inserted) and records re-encoded with valid
    digests (junk items, cut items, a witness name leaving the directory, a case claiming a
    refutation it does not have, a threshold run claiming a disagreement at T = 1): each must
    be a clean error, nothing written outside, no NUL bytes in cases.jsonl. Re-encodings that
    claim nothing a merge rests on (a threshold run with a smaller recorded gap) cannot be
    detected (docs/distributed.md §4.1): they are counted apart, as `undetectable`, in the
    accepted column's note."""
    fuzz, threshold = make_shards(ltsim, env, work)
    sources = [parse_shard(open(fuzz, "rb").read()), parse_shard(open(threshold, "rb").read())]
    # What the honest shards merge to: a merge that exits 0 must print (threshold) or write
    # (fuzz) exactly this, or it reported a result no process computed.
    honest_threshold = subprocess.run([ltsim, "merge", threshold], capture_output=True, env=env).stdout
    honest_dir = os.path.join(work, "merged")
    shutil.rmtree(honest_dir, ignore_errors=True)
    subprocess.run([ltsim, "merge", fuzz], capture_output=True, env=env)
    honest_cases = open(os.path.join(honest_dir, "cases.jsonl"), "rb").read()

    def same_as_honest(k, merged):
        def check(stdout):
            if k % 2 == 1:
                return open(stdout, "rb").read() == honest_threshold
            return open(os.path.join(merged, "cases.jsonl"), "rb").read() == honest_cases
        return check
    out = []
    k = 0
    while len(out) < args.per_class:
        header, records = sources[k % 2]
        header = json.loads(json.dumps(header))
        records = [list(r) for r in records]
        merged = os.path.join(work, f"merged{k}")
        if k % 2 == 0:  # every fuzz merge into a directory of its own
            c = header["command"]
            c[c.index("--out-dir") + 1] = merged
        path = os.path.join(work, f"shard{k}.ltsim-shard")
        kind = rng.randrange(7)
        if kind <= 2:  # one byte changed, cut or inserted anywhere
            data = write_shard(header, records)
            at = rng.randrange(len(data))
            if kind == 0:
                mutant = data[:at] + bytes([data[at] ^ (1 << rng.randrange(8))]) + data[at + 1:]
            elif kind == 1:
                mutant = data[:at]
            else:
                mutant = data[:at] + bytes([rng.randrange(256)]) + data[at:]
        else:  # re-encoded with valid digests
            i = rng.randrange(len(records))
            item = records[i][2]
            if kind == 3:
                records[i][2] = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 40)))
            elif kind == 4:
                records[i][2] = item[:rng.randrange(len(item))] if item else b"x"
            elif k % 2 == 0:  # fuzz: a witness escaping, or a case claiming a refutation
                if kind == 5:
                    name = b"../../escaped.witness.json"
                    records[i][2] = ((1).to_bytes(8, "little") + len(name).to_bytes(8, "little") + name +
                                     (3).to_bytes(8, "little") + b"{}\n" + (3).to_bytes(8, "little") + b"{}\n")
                else:
                    n = int.from_bytes(item[:8], "little")
                    pos = 8
                    for _ in range(2 * n):
                        size = int.from_bytes(item[pos:pos + 8], "little")
                        pos += 8 + size
                    size = int.from_bytes(item[pos:pos + 8], "little")
                    line = json.loads(item[pos + 8:pos + 8 + size])
                    for prop in line["properties"].values():
                        prop["holds"] = False
                    text = (json.dumps(line) + "\n").encode()
                    records[i][2] = item[:pos] + len(text).to_bytes(8, "little") + text
            else:  # threshold: the first run's first length claims a gap of 10 (a disagreement)
                records.sort(key=lambda r: r[1])
                b = bytearray(records[0][2])
                b[8:16] = struct.pack("<d", 10.0)
                if rng.random() < 0.5:
                    b[16] = 1  # and the flag saying it disagrees
                records[0][2] = bytes(b)
            mutant = write_shard(header, records)
        open(path, "wb").write(mutant)
        escaped = os.path.join(work, "escaped.witness.json")
        lines = os.path.join(merged, "cases.jsonl")
        out.append((["merge", path], [path],
                    lambda lines=lines, escaped=escaped: os.path.exists(escaped) or (
                        os.path.exists(lines) and b"\0" in open(lines, "rb").read()),
                    same_as_honest(k, merged)))
        k += 1
    return out


# ---------------------------------------------------------------- strings that change
def run_strings_change(args, rng, work, ltsim, env):
    """A string file rewritten in place, or replaced by rename, while `eval` reads it: the run
    must print the answer for the old or the new file, or fail cleanly; a crash, a hang or an
    answer for neither (a mix) counts against it."""
    model = os.path.join(ROOT, "corpus/models/pair/f.json")
    counts = {k: 0 for k in ["clean", "crash", "hang", "accepted", "unclear", "lost", "memory"]}
    examples = {}
    texts = []
    for v in range(4):
        r = random.Random(v)
        texts.append(" ".join(str(r.randrange(3)) for _ in range(300000)) + "\n")
    texts.append("0^99999999 1 2 1\n")
    texts.append(("1 " * 200000) + "7\n")  # a token outside the model's alphabet
    answers = {}
    for t, text in enumerate(texts):
        path = os.path.join(work, f"ref{t}.txt")
        open(path, "w").write(text)
        result = subprocess.run([ltsim, "eval", model, path, "--json"], capture_output=True, env=env)
        answers[t] = json.loads(result.stdout)["output"] if result.returncode == 0 else None
    for k in range(args.per_class):
        a, b = rng.sample(range(len(texts)), 2)
        path = os.path.join(work, f"x{k}.txt")
        open(path, "w").write(texts[a])
        swap = rng.random() < 0.5
        delay = rng.random() * 0.05
        spare = os.path.join(work, f"y{k}.txt")
        open(spare, "w").write(texts[b])

        def change():
            time.sleep(delay)
            if swap:
                os.rename(spare, path)
            else:
                with open(path, "r+") as f:  # in place
                    f.write(texts[b])
                    f.truncate()
        thread = threading.Thread(target=change)
        thread.start()
        stdout = os.path.join(work, "out.json")
        code, err, rss, hung = run_one([ltsim, "eval", model, path, "--json"], args.timeout, env, work,
                                       stdout=stdout)
        thread.join()
        outcome = classify(code, err, hung, [path])
        if code == 0:
            try:
                got = json.loads(open(stdout).read())["output"]
            except (ValueError, KeyError):
                got = "unreadable"
            outcome = "clean" if got in (answers[a], answers[b]) else "accepted"
        counts[outcome] += 1
        if outcome != "clean":
            examples.setdefault(outcome, []).append((["eval", model, path], code, err.strip()[:300]))
    return counts, examples


# ---------------------------------------------------------------- output sets and locks
def member_of(directory):
    """(f's meta, g's meta) of a family directory, or None when a file is missing."""
    try:
        f = json.load(open(os.path.join(directory, "f.json")))["meta"]["params"]
        g = json.load(open(os.path.join(directory, "g.json")))["meta"]["params"]
        return f, g
    except (OSError, ValueError, KeyError):
        return None


def run_sets(args, rng, work, ltsim, env):
    """`construct family --out-dir D` killed (SIGKILL) at a random moment while it replaces an
    earlier member: D must then hold one member whole (f and g of the same parameters), the old
    or the new one, and the next run must succeed."""
    counts = {k: 0 for k in ["clean", "crash", "hang", "accepted", "unclear", "lost", "memory"]}
    examples = {}
    slopes = ["8", "4", "2", "1"]
    for k in range(args.per_class):
        d = os.path.join(work, f"fam{k % 8}")
        slope = slopes[k % len(slopes)]
        cmd = [ltsim, "construct", "family", "bump", "--slope", slope, "--eps", "0.05", "--period", "2",
               "--out-dir", d]
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=work)
        time.sleep(rng.random() * 0.03)
        proc.kill()
        proc.wait()
        pair = member_of(d) if os.path.exists(os.path.join(d, "f.json")) or os.path.exists(os.path.join(d, "g.json")) else "absent"
        consistent = pair == "absent" or (pair is not None and pair[0] == pair[1])
        again = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=work)
        if not consistent or again.returncode != 0:
            counts["lost"] += 1
            examples.setdefault("lost", []).append((cmd[1:], again.returncode,
                                                    "mixed set" if not consistent else again.stderr.decode()[:300]))
        else:
            counts["clean"] += 1
    return counts, examples


def run_concurrent(args, rng, work, ltsim, env):
    """Two runs into one directory at once (two fresh fuzz campaigns, two resumes, two family
    writers): one may be refused, cleanly; the directory must stay whole and resumable."""
    counts = {k: 0 for k in ["clean", "crash", "hang", "accepted", "unclear", "lost", "memory"]}
    examples = {}
    fuzz = ["fuzz", "--seed", "3", "--cases", "40", "--threads", "1", "--min-x-length", "100",
            "--max-x-length", "300", "--min-z-length", "20", "--max-z-length", "40", "--out-dir"]
    for k in range(args.per_class):
        d = os.path.join(work, f"c{k}")
        kind = k % 3
        if kind == 0:
            cmds = [fuzz + [d], fuzz + [d]]
        elif kind == 1:
            subprocess.run([ltsim] + fuzz[:4] + ["5"] + fuzz[5:] + [d], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, env=env)
            open(os.path.join(d, "campaign.json"), "r")  # exists
            options = json.load(open(os.path.join(d, "campaign.json")))
            options["cases"] = 40
            open(os.path.join(d, "campaign.json"), "w").write(json.dumps(options, indent=2) + "\n")
            cmds = [["fuzz", "--resume", d], ["fuzz", "--resume", d]]
        else:
            cmds = [["construct", "family", "bump", "--slope", s, "--eps", "0.05", "--out-dir", d] for s in ["8", "2"]]
        procs = [subprocess.Popen([ltsim] + c, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=work)
                 for c in cmds]
        results = [(p.wait(timeout=args.timeout * 5), p.stderr.read().decode()) for p in procs]
        bad = False
        for code, err in results:
            if code not in (0, 1, 2) or "internal check" in err or (code == 2 and "another ltsim run" not in err
                                                                  and "already holds" not in err):
                bad = True
        if kind < 2:
            check = subprocess.run([ltsim, "fuzz", "--resume", d], stdout=subprocess.DEVNULL,
                                   stderr=subprocess.PIPE, env=env)
            whole = check.returncode in (0, 1)
        else:
            pair = member_of(d)
            whole = pair is not None and pair[0] == pair[1]
        if bad:
            counts["unclear"] += 1
            examples.setdefault("unclear", []).append((cmds[0], [r[0] for r in results], results[0][1][:200]))
        elif not whole:
            counts["lost"] += 1
            examples.setdefault("lost", []).append((cmds[0], [r[0] for r in results], "not whole afterwards"))
        else:
            counts["clean"] += 1
    return counts, examples


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ltsim", default=os.path.join(ROOT, "build/tools/ltsim/ltsim"))
    parser.add_argument("--per-class", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=20.0)
    parser.add_argument("--classes", default="models,strings,witnesses,search-witnesses,campaigns,flags,"
                                             "steer,shards,strings-change,sets,concurrent")
    parser.add_argument("--show", type=int, default=3, help="examples printed per non-clean outcome")
    parser.add_argument("--keep", action="store_true",
                        help="keep the generated inputs (their directory is printed) to inspect")
    args = parser.parse_args()
    ltsim = os.path.abspath(args.ltsim)
    env = dict(os.environ)
    env.setdefault("ASAN_OPTIONS", "detect_leaks=0:abort_on_error=0")
    env.setdefault("UBSAN_OPTIONS", "halt_on_error=1:print_stacktrace=0")
    rng = random.Random(args.seed)
    work = tempfile.mkdtemp(prefix="ltsim_malformed_")
    open(os.path.join(work, "keep.txt"), "w").write("0 1 0^5\n")
    print(f"ltsim {ltsim}, seed {args.seed}, {args.per_class} per class, timeout {args.timeout} s")
    print(f"{'class':<18}{'tried':>7}{'clean':>7}{'crash':>7}{'hang':>6}{'accepted':>10}{'unclear':>9}"
          f"{'lost':>6}{'>1GiB':>7}")
    totals = {}
    runners = {"strings-change": run_strings_change, "sets": run_sets, "concurrent": run_concurrent}
    for cls in args.classes.split(","):
        d = os.path.join(work, cls)
        os.makedirs(d)
        if cls in runners:
            counts, examples = runners[cls](args, rng, d, ltsim, env)
            tried = sum(v for k, v in counts.items() if k != "memory")
        else:
            if cls == "models":
                cases = invocations_models(args, rng, d)
            elif cls == "strings":
                cases = invocations_strings(args, rng, d)
            elif cls == "witnesses":
                cases = invocations_witnesses(args, rng, d, search=False)
            elif cls == "search-witnesses":
                cases = invocations_witnesses(args, rng, d, search=True)
            elif cls == "campaigns":
                cases = invocations_campaigns(args, rng, d, ltsim, env)
            elif cls == "steer":
                cases = invocations_steer(args, rng, d, ltsim, env)
            elif cls == "shards":
                cases = invocations_shards(args, rng, d, ltsim, env)
            else:
                cases = invocations_flags(args, rng, d)
            counts = {k: 0 for k in ["clean", "crash", "hang", "accepted", "unclear", "lost", "memory"]}
            examples = {}
            for case in cases:
                cmd, names = case[0], case[1]
                lost = case[2] if len(case) > 2 else None
                honest = case[3] if len(case) > 3 else None
                stdout = os.path.join(d, "stdout.txt")
                code, err, rss, hung = run_one([ltsim] + cmd, args.timeout, env, d, stdout=stdout)
                if rss > GIB:
                    counts["memory"] += 1
                    examples.setdefault("memory", []).append((cmd, code, f"peak RSS {rss >> 20} MiB"))
                outcome = classify(code, err, hung, names)
                # A merge that ignores the changed bytes (an item after the first disagreement,
                # never read) and prints what the honest shards give reported nothing forged.
                if outcome == "accepted" and code == 0 and honest and honest(stdout):
                    outcome = "clean"
                if lost and lost():
                    outcome = "lost"
                counts[outcome] += 1
                if outcome != "clean":
                    examples.setdefault(outcome, []).append((cmd, code, err.strip()[:300]))
            tried = len(cases)
        print(f"{cls:<18}{tried:>7}{counts['clean']:>7}{counts['crash']:>7}{counts['hang']:>6}"
              f"{counts['accepted']:>10}{counts['unclear']:>9}{counts['lost']:>6}{counts['memory']:>7}",
              flush=True)
        for outcome, ex in examples.items():
            for cmd, code, err in ex[:args.show]:
                short = " ".join(c if len(c) < 60 else c[:57] + "..." for c in cmd)
                print(f"    {outcome}: exit {code}: ltsim {short}\n        {err.splitlines()[0] if err else ''}")
        for k, v in counts.items():
            totals[k] = totals.get(k, 0) + v
        totals["tried"] = totals.get("tried", 0) + tried
    print(f"{'total':<18}{totals['tried']:>7}{totals['clean']:>7}{totals['crash']:>7}{totals['hang']:>6}"
          f"{totals['accepted']:>10}{totals['unclear']:>9}{totals['lost']:>6}{totals['memory']:>7}")
    kept = open(os.path.join(work, "keep.txt")).read()
    print("generate X --out X kept X:", "yes" if kept == "0 1 0^5\n" else "NO (lost)")
    if args.keep:
        print("inputs kept in", work)
    else:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
