#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Every saved record of tests/data, reported again by `greenctx KIND --from FILE`, reads as it did
when tests/data/golden/ was written: the console text, the exit status, stderr and the markdown,
CSV and SVG files, byte for byte. Guards the report code against a change of what users see.

Usage: check_from_golden.py GREENCTX DATA_DIR [--update]
  --update  write the golden files from this build instead of comparing (review the diff after).
Exits 1 naming each difference (its first differing line), 0 when every output is the same.
"""
import subprocess
import sys
import tempfile
from pathlib import Path

# (record, command words, the files the command writes besides its console text)
CASES = [
    ("info.json", ["info"], ["md", "csv"]),
    ("info-two-gpus.json", ["info"], ["md", "csv"]),
    ("verify.json", ["verify"], ["md", "csv"]),
    ("verify-two-gpus.json", ["verify"], ["md", "csv"]),
    ("split.json", ["split"], ["md", "csv"]),
    ("tune.json", ["tune"], ["md", "csv", "svg"]),
    ("scale.json", ["scale"], ["md", "csv", "svg"]),
    ("bench-latency.json", ["bench"], ["md", "csv", "svg"]),
    ("bench-latency-missed.json", ["bench"], ["md", "csv", "svg"]),
    ("bench-adaptive.json", ["bench", "adaptive"], ["md", "csv", "svg"]),
    ("bench-comm.json", ["bench", "comm"], ["md", "csv", "svg"]),
]
OPTION = {"md": "--markdown", "csv": "--csv", "svg": "--svg"}


def outputs(cli, record, words, kinds, tmp):
    """What the command shows and writes for the record: {name: bytes}."""
    files = {kind: Path(tmp) / f"out.{kind}" for kind in kinds}
    args = [cli, *words, "--from", str(record)]
    for kind, path in files.items():
        args += [OPTION[kind], str(path)]
    run = subprocess.run(args, capture_output=True, timeout=60)
    got = {"stdout.txt": run.stdout, "stderr.txt": run.stderr,
           "exit.txt": f"{run.returncode}\n".encode()}
    for kind, path in files.items():
        got[f"report.{kind}"] = path.read_bytes() if path.exists() else b"(not written)\n"
    return got


def first_difference(want: bytes, got: bytes) -> str:
    a, b = want.decode(errors="replace").splitlines(), got.decode(errors="replace").splitlines()
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return f"line {i + 1}: golden {x!r}, now {y!r}"
    return f"golden has {len(a)} lines, now {len(b)}"


def main(argv):
    if len(argv) not in (2, 3) or (len(argv) == 3 and argv[2] != "--update"):
        sys.exit(__doc__.split("\n\n")[1])
    cli, data = argv[0], Path(argv[1])
    update = len(argv) == 3
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, words, kinds in CASES:
            golden = data / "golden" / name.removesuffix(".json")
            got = outputs(cli, data / name, words, kinds, tmp)
            if update:
                golden.mkdir(parents=True, exist_ok=True)
                for file, content in got.items():
                    (golden / file).write_bytes(content)
                continue
            for file, content in got.items():
                want_path = golden / file
                if not want_path.exists():
                    print(f"{want_path}: missing (write it with --update)")
                    bad += 1
                elif want_path.read_bytes() != content:
                    print(f"{' '.join(words)} --from {name}: {file} differs, "
                          f"{first_difference(want_path.read_bytes(), content)}")
                    bad += 1
    if update:
        print(f"check_from_golden: wrote the golden files of {len(CASES)} records")
        return 0
    print(f"check_from_golden: {len(CASES)} records, {bad} difference(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
