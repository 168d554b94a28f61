#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Compares an unconfined run with a confined one (greenctx run's GPU check): the checksum or
sha256 printed by run_workload / torch_matmul.py must be the same, and the confined run must take
longer per operation. Exits 1 otherwise.

    compare-runs.py UNCONFINED.txt CONFINED.txt
"""
import re
import sys


def read(path):
    text = open(path).read()
    ms = re.search(r"([0-9.]+) ms per", text)
    digest = re.search(r"(checksum|sha256) (\S+)", text)
    if not ms or not digest:
        sys.exit(f"compare-runs: no time or checksum in {path}:\n{text}")
    return float(ms.group(1)), digest.group(2).rstrip(",")


def main():
    (t_all, d_all), (t_conf, d_conf) = read(sys.argv[1]), read(sys.argv[2])
    print(f"unconfined {t_all:.3f} ms, confined {t_conf:.3f} ms: {t_conf / t_all:.2f}x slower; "
          f"results {'identical' if d_all == d_conf else 'DIFFERENT'}")
    ok = d_all == d_conf and t_conf > t_all
    print("OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
