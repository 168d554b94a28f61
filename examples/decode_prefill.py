#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A transformer's decode step kept responsive beside its prefill of long prompts, on one GPU.

The model is a Llama-style decoder of Hugging Face transformers with random weights (nothing is
downloaded): by default the shape of a 1B model (hidden 2048, 16 layers, 32 attention heads, 8 KV
heads, MLP 8192, vocabulary 32000) in bf16.

- Critical work, a decode step: one new token for each of --batch sequences (default 4) over a KV
  cache of --context tokens (default 1024), then the greedy next token. The cache is cropped back
  to --context before each step, so every step does the same work.
- Background, prefill: --prefill-batch prompts of --prompt tokens (default 2 x 2048) through the
  decoder, and the last position's logits, counted in prompt tokens per second.

Measured, both in this process with torch, through greenctx's measurements:
1. greenctx.tune chooses the split N,rest: the decode step on N SMs, prefill on the rest, the
   N that keeps the decode p99 within --p99-times-alone (default 1.5) of its p99 alone on the
   whole GPU with the most prefill tokens/s (the split that came closest when none does).
2. greenctx.measure_contention on that split: the decode step alone (whole GPU, and its green
   context), sharing the GPU with prefill at equal priority, on a high-priority stream, and on the
   two green contexts (without and with the priority); prefill tokens/s in each.
3. The background held narrow (greenctx.measure_adaptive's "narrow" policy): prefill on M SMs of
   C,M,rest (M: half and three quarters of what the split leaves it), the decode step on the
   same N SMs, the rest idle; against prefill held on the whole rest (static).

Times. In 1 and 2 each decode step is held until Python has enqueued all of it (hold_launch), so
its time is the GPU's, as a step replayed from a CUDA graph would see it; where the step cannot be
held (it synchronizes), its launch time counts and the output says so. In 3 a step's time runs
from its arrival to its completion seen by the host, launch included (that measurement's own
alone and static rows are the comparison). p50 and p99 are greenctx's (interpolated between
order statistics), in microseconds.

Usage:
  python examples/decode_prefill.py [--quick] [--batch 4] [--context 1024] [--prompt 2048]
                                    [--samples 1000] [--split S | --tune-sizes LIST] [--json FILE]

--quick: a 4-layer model of hidden 1024, context 256, prompts of 512, 200 samples: a minute or
so. Exit codes (as the greenctx CLI): 0 ok; 2 bad arguments or a request this GPU cannot make;
3 no PyTorch, transformers, greenctx module, driver or GPU; 4 the driver lacks a needed feature;
5 another CUDA error.
"""
from __future__ import annotations

import argparse
import dataclasses
import datetime
import functools
import json
import platform
import sys
import time
from typing import TYPE_CHECKING, Any

from example_support import (exit_codes, fail as fail_as, nvidia_driver_version, open_gpu,
                             positive_float, positive_int)

PROG = "decode_prefill"
fail = functools.partial(fail_as, PROG)

if TYPE_CHECKING:  # imported in main, once open_gpu has said whether it can be
    import greenctx

# The model and run shapes: the defaults, and --quick's.
FULL = dict(layers=16, hidden=2048, heads=32, kv_heads=8, mlp=8192, vocab=32000, batch=4,
            context=1024, prefill_batch=2, prompt=2048, samples=1000, tune_samples=300,
            rounds=10)
QUICK = dict(layers=4, hidden=1024, heads=16, kv_heads=4, mlp=4096, vocab=32000, batch=4,
             context=256, prefill_batch=2, prompt=512, samples=200, tune_samples=100, rounds=4)


def sm_counts(text: str) -> list[int]:
    """An argparse type: positive SM counts separated by commas."""
    return [positive_int(part.strip()) for part in text.split(",")]


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true",
                   help="a small model and fewer samples (values given still apply)")
    for name, what in (("layers", "decoder layers"), ("hidden", "hidden size"),
                       ("heads", "attention heads"), ("kv-heads", "key/value heads"),
                       ("mlp", "MLP size"), ("vocab", "vocabulary size"),
                       ("batch", "decode sequences"), ("context", "tokens in the KV cache"),
                       ("prefill-batch", "prompts per prefill"), ("prompt", "tokens per prompt"),
                       ("samples", "decode samples per placement"),
                       ("tune-samples", "samples per split while tuning"),
                       ("rounds", "rounds the samples are taken in")):
        key = name.replace("-", "_")
        p.add_argument(f"--{name}", type=positive_int,
                       help=f"{what} (default {FULL[key]}, --quick {QUICK[key]})")
    p.add_argument("--p99-times-alone", type=positive_float, default=1.5,
                   help="tune's objective: decode p99 at most this times its p99 alone on the "
                        "whole GPU (default 1.5)")
    p.add_argument("--split", help="skip tune: use this split (e.g. 48,rest)")
    p.add_argument("--tune-sizes", type=sm_counts, default=[], metavar="LIST",
                   help="the N values tune may choose, separated by commas (e.g. 16,32,64; "
                        "default every N,rest this GPU makes): fewer make it shorter")
    p.add_argument("--device", type=int, default=0, help="GPU ordinal (default 0)")
    p.add_argument("--seed", type=int, default=6, help="seed of the weights and tokens")
    p.add_argument("--json", metavar="FILE",
                   help="write every result (raw samples included) and the environment")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress lines")
    args = p.parse_args(argv)
    shape = QUICK if args.quick else FULL
    for key, value in shape.items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    if args.hidden % args.heads or args.heads % args.kv_heads:
        p.error(f"--hidden {args.hidden} must be a multiple of --heads {args.heads}, and --heads "
                f"of --kv-heads {args.kv_heads}")
    if (args.hidden // args.heads) % 2:
        p.error(f"a head of {args.hidden // args.heads} (--hidden / --heads) must be even for "
                "rotary embeddings")
    if args.split and args.tune_sizes:
        p.error("--tune-sizes is for tune, which --split skips: give one of them")
    if args.rounds > args.samples:
        p.error(f"--rounds {args.rounds} is more than --samples {args.samples}")
    return args


def crop(cache: Any, length: int) -> Any:
    """The KV cache back to `length` tokens: a transformers Cache is cropped in place (by the
    number of tokens to drop, which every version takes); an older tuple cache is never extended
    in place, so it is returned as it is."""
    if hasattr(cache, "crop"):
        extra = cache.get_seq_length() - length
        if extra > 0:
            cache.crop(-extra)
    return cache


class Model:
    """The random-weight decoder, its KV cache and the decode and prefill launches."""

    def __init__(self, torch: Any, args: argparse.Namespace) -> None:
        try:
            import transformers
            from transformers import LlamaConfig, LlamaForCausalLM
        except ImportError as e:
            fail(3, f"needs Hugging Face transformers (import failed: {e})")
        self.torch, self.args = torch, args
        self.transformers_version = transformers.__version__
        config = LlamaConfig(
            vocab_size=args.vocab, hidden_size=args.hidden, intermediate_size=args.mlp,
            num_hidden_layers=args.layers, num_attention_heads=args.heads,
            num_key_value_heads=args.kv_heads,
            max_position_embeddings=args.context + args.prompt + 8)
        torch.manual_seed(args.seed)
        with torch.device("cuda"):
            self.model = LlamaForCausalLM(config).to(torch.bfloat16).eval()
        self.attention = getattr(self.model.config, "_attn_implementation", None)
        self.parameters = sum(p.numel() for p in self.model.parameters())
        gen = torch.Generator(device="cuda").manual_seed(args.seed)
        ids = functools.partial(torch.randint, 0, args.vocab, device="cuda", generator=gen)
        self.context = ids((args.batch, args.context))
        self.token = ids((args.batch, 1))
        self.next = torch.empty(args.batch, dtype=torch.long, device="cuda")
        self.prompts = ids((args.prefill_batch, args.prompt))
        with torch.no_grad():
            self.cache = self.model(input_ids=self.context, use_cache=True).past_key_values
        self.streams: dict[int, Any] = {}
        # Once each, untimed: kernels loaded, allocator warmed.
        self.decode(None)
        self.prefill(None)
        torch.cuda.synchronize()

    def stream(self, ref: greenctx.StreamRef | None) -> Any:
        """torch's stream for a greenctx stream (made once per handle); None: the current one."""
        if ref is None:
            return self.torch.cuda.current_stream()
        s = self.streams.get(ref.handle)
        if s is None:
            s = self.torch.cuda.ExternalStream(ref.handle, device=self.torch.cuda.current_device())
            self.streams[ref.handle] = s
        return s

    def decode(self, ref: greenctx.StreamRef | None) -> None:
        """One decode step on `ref`'s stream; enqueues only."""
        torch = self.torch
        with torch.no_grad(), torch.cuda.stream(self.stream(ref)):
            cache = crop(self.cache, self.args.context)
            logits = self.model(input_ids=self.token, past_key_values=cache,
                                use_cache=True).logits
            torch.argmax(logits[:, -1, :], dim=-1, out=self.next)

    def prefill(self, ref: greenctx.StreamRef | None) -> float:
        """One prefill on `ref`'s stream; returns the prompt tokens it processes."""
        torch = self.torch
        with torch.no_grad(), torch.cuda.stream(self.stream(ref)):
            hidden = self.model.model(input_ids=self.prompts, use_cache=False).last_hidden_state
            self.model.lm_head(hidden[:, -1, :])
        return float(self.args.prefill_batch * self.args.prompt)


def narrow_widths(device_sms: int, critical_sms: int, granularity: int) -> list[int]:
    """Prefill widths M for the narrow policy: half and three quarters of what C,rest leaves it,
    rounded down to the GPU's granularity."""
    rest = device_sms - critical_sms
    widths = {max(granularity, int(rest * f) // granularity * granularity) for f in (0.5, 0.75)}
    return sorted(w for w in widths if critical_sms + w < device_sms)


def us(x: float | None) -> str:
    return "-" if x is None else f"{x:.1f}"


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    torch, driver, gpu = open_gpu(PROG, args.device)
    import greenctx  # open_gpu has imported it, or exited saying why it cannot be

    say = (lambda line: None) if args.quiet else (lambda line: print(f"  {line}", file=sys.stderr))
    started = time.perf_counter()
    with exit_codes(PROG):
        model = Model(torch, args)
        sms = gpu.sms()
        device_sms = sms.sm_count
        print(f"{PROG}: {gpu.name}, {device_sms} SMs, driver {nvidia_driver_version() or '?'} "
              f"(CUDA {greenctx.format_cuda_version(driver.version)}), torch {torch.__version__}, "
              f"transformers {model.transformers_version}")
        print(f"model: Llama-style, {model.parameters / 1e9:.2f}B parameters (random), "
              f"{args.layers} layers, hidden {args.hidden}, attention {model.attention}; decode "
              f"{args.batch} x 1 token over {args.context} cached; prefill {args.prefill_batch} x "
              f"{args.prompt} tokens")
        critical = greenctx.CriticalWorkload(
            model.decode, name=f"decode step, batch {args.batch}, context {args.context}")
        background = greenctx.BackgroundWorkload(
            model.prefill, name=f"prefill {args.prefill_batch} x {args.prompt}",
            unit="tokens/s", unit_scale=1)

        # Can a step be held until it is enqueued? Not if something in it synchronizes.
        hold = True
        try:
            greenctx.measure_contention(
                gpu, greenctx.PartitionSet.create(gpu, f"{sms.min_partition_size},rest"),
                critical, background,
                samples=3, warmup=1, rounds=1, rate_window_ms=10, placements=["alone"],
                hold_launch=True)
        except greenctx.RequestError as e:
            if "held back" not in str(e):
                raise
            hold = False
            print(f"the decode step cannot be held until enqueued, so its launch time counts: {e}")

        split = args.split
        tuned = None
        if split is None:
            say("tune: the decode step on N SMs beside prefill on the rest, per N")
            tuned = greenctx.tune(gpu, critical, background, p99_times_alone=args.p99_times_alone,
                                  samples=args.tune_samples, confirm_samples=args.samples,
                                  sizes=args.tune_sizes, hold_launch=hold, progress=say)
            if tuned.split:
                split = tuned.split
                print(f"tune: {split} ({tuned.reason})")
            else:
                closest = tuned.guided.closest if tuned.guided else None
                if closest is None:
                    fail(5, f"tune measured no split: {tuned.reason}")
                split = f"{closest},rest"
                print(f"tune: no split meets the objective ({tuned.reason}); the closest, "
                      f"{split}, is used")
        parts = greenctx.PartitionSet.create(gpu, split)
        critical_sms, rest_sms = parts[0].obtained, parts[1].obtained

        say(f"placements on {split}")
        placements = ["alone", "alone_green", "shared", "priority", "green", "green_priority"]
        contention = greenctx.measure_contention(
            gpu, parts, critical, background, samples=args.samples, rounds=args.rounds,
            placements=placements, hold_launch=hold, progress=say)

        widths = narrow_widths(device_sms, critical_sms, max(sms.coscheduled_alignment, 1))
        say(f"narrow: prefill held on {widths} SMs beside the decode step on {critical_sms}")
        del parts  # the adaptive measurement makes its own layouts
        adaptive = greenctx.measure_adaptive(
            gpu, critical, background, critical_sms=critical_sms, shrink_to=widths,
            policies=["narrow"], samples=args.samples, rounds=args.rounds, progress=say)

    alone = next(p for p in contention.placements if p.name == "alone")
    alone_p99 = alone.critical.gpu.p99 if alone.critical else None
    time_kind = "gpu" if hold else "host"
    print(f"\ndecode step ({time_kind} time, us) and prefill, split {split}: decode on "
          f"{critical_sms} SMs, prefill on {rest_sms}")
    print(f"{'placement':<44} {'p50':>8} {'p99':>8} {'x alone':>8} {'prefill tok/s':>14}")
    for p in contention.placements:
        stats = getattr(p.critical, time_kind) if p.critical else None
        ratio = f"{stats.p99 / alone_p99:.2f}" if stats and alone_p99 else "-"
        rate = f"{p.background.rate:.0f}" if p.background else "-"
        print(f"{p.description[:44]:<44} {us(stats and stats.p50):>8} "
              f"{us(stats and stats.p99):>8} {ratio:>8} {rate:>14}")
    print(f"prefill alone: {contention.background_full.rate:.0f} tokens/s on all SMs, "
          f"{contention.background_share.rate:.0f} on {rest_sms}")

    print(f"\nprefill held narrow (host time from arrival, us; decode on {critical_sms} SMs)")
    print(f"{'configuration':<44} {'p50':>8} {'p99':>8} {'x alone':>8} {'prefill tok/s':>14}")
    verdicts = {v.name: v for v in adaptive.verdicts}
    for c in adaptive.configurations:
        v = verdicts.get(c.name)
        ratio = f"{v.isolation:.2f}" if v and v.isolation is not None else "-"
        rate = f"{c.background.rate:.0f}" if c.background else "-"
        print(f"{c.description[:44]:<44} {c.critical.host.p50:>8.1f} {c.critical.host.p99:>8.1f} "
              f"{ratio:>8} {rate:>14}")
    print(f"({time.perf_counter() - started:.0f} s)")

    if args.json:
        doc = {
            "kind": "greenctx.decode-prefill-example", "schema": 1,
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "command": " ".join([PROG] + argv),
            "gpu": {"name": gpu.name, "sm_count": device_sms,
                    "compute_capability": list(gpu.compute_capability)},
            "driver": {"nvidia": nvidia_driver_version(),
                       "cuda": greenctx.format_cuda_version(driver.version)},
            "torch": torch.__version__, "transformers": model.transformers_version,
            "greenctx": greenctx.__version__, "python": platform.python_version(),
            "args": vars(args), "parameters": model.parameters, "attention": model.attention,
            "hold_launch": hold, "split": split,
            "tune": dataclasses.asdict(tuned) if tuned else None,
            "contention": dataclasses.asdict(contention),
            "adaptive": dataclasses.asdict(adaptive),
        }
        with open(args.json, "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
        print(f"everything, raw samples included, written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
