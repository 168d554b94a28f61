# SPDX-License-Identifier: Apache-2.0
"""transformers, unmodified: a GPT-2 built from a config object (2 layers, 4 heads, 128 wide, a
vocabulary of 512; nothing downloaded), random initial weights from a fixed seed (made on the
CPU), dropout off, 30 AdamW training steps on seeded token batches that count up, then greedy
generate() of 24 tokens for two prompts (the smallest margin between the two best logits goes to
stderr: it was 1.1 on the CPU, far above fp32's noise). Losses are printed with repr() and compared within --tolerance 1e-5
(cuBLAS and the attention kernels may pick others for fewer SMs); the generated tokens exactly.
The model's forward pass is then checked with fill.py. Exits 77 without torch, transformers or a
GPU, 1 if a loss is not finite, did not fall, or the work escaped.

    python3 transformers_gpt2.py
"""
import sys

import common
import fill

NAME = "transformers_gpt2"


def main():
    torch = common.need(NAME, "torch")
    transformers = common.need(NAME, "transformers")
    if not torch.cuda.is_available():
        common.skip(NAME, "no CUDA GPU visible to torch")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device("cuda", 0)
    config = transformers.GPT2Config(
        vocab_size=512, n_positions=128, n_embd=128, n_layer=2, n_head=4, resid_pdrop=0.0,
        embd_pdrop=0.0, attn_pdrop=0.0, bos_token_id=0, eos_token_id=0, pad_token_id=0)
    torch.manual_seed(0)
    model = transformers.GPT2LMHeadModel(config).to(dev)
    gen = torch.Generator().manual_seed(1234)
    # Batches with structure to learn: each sequence counts up from a random start (mod 512).
    starts = torch.randint(1, 512, (30, 16, 1), generator=gen)
    batches = ((starts + torch.arange(64)) % 511 + 1).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    model.train()
    losses = []
    with common.timer(NAME, "30 training steps"):
        for step, ids in enumerate(batches):
            opt.zero_grad(set_to_none=True)
            loss = model(input_ids=ids, labels=ids).loss
            loss.backward()
            opt.step()
            losses.append(loss.item())
            print(f"step {step} loss {losses[-1]!r}")
    good = common.report_losses(losses)

    model.eval()
    prompts = torch.tensor([[5, 6, 7, 8, 9, 10, 11, 12], [300, 301, 302, 303, 304, 305, 306, 307]],
                           device=dev)
    with torch.no_grad():
        out = model.generate(prompts, attention_mask=torch.ones_like(prompts), do_sample=False,
                             max_new_tokens=24, min_new_tokens=24, pad_token_id=0,
                             output_scores=True, return_dict_in_generate=True)
    for row in out.sequences.tolist():
        print("generated:", " ".join(str(t) for t in row))
    margin = min(float((s.topk(2).values[:, 0] - s.topk(2).values[:, 1]).min())
                 for s in out.scores)
    common.say(NAME, f"smallest margin between the two best logits while generating: {margin:.4f}")

    stream = torch.cuda.current_stream()

    def forward():
        with torch.no_grad():
            model(input_ids=batches[0])
        stream.synchronize()

    confined = fill.check("gpt2 forward", forward)
    return 0 if good and confined is not False else 1


if __name__ == "__main__":
    sys.exit(main())
