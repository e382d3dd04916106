"""Score ddpify findings (json under OUT) against judgments.tsv. Usage: python score.py OUTDIR"""
import csv, json, sys, collections
OUT = sys.argv[1]
CAT = {"DDP001":"missing-set-epoch","DDP002":"shuffle-with-sampler","DDP003":"missing-sampler","DDP004":"load-no-map-location",
       "DDP005":"save-every-rank","DDP006":"local-rank-guard","DDP007":"module-keys","DDP008":"module-keys","DDP009":"unsynced-bn",
       "DDP011":"same-seed","DDP012":"print-every-rank","DDP013":"print-every-rank","DDP014":"unreduced-metric",
       "DDP015":"other:padded-eval","DDP016":"local-rank-arg","DDP018":"move-after-wrap","DDP024":"dataparallel",
       "DDP027":"asymmetric-collective","DDP028":"other:download-every-rank","DDP033":"other:global-rank-as-device",
       "DDP034":"other:seed-in-parent"}
DEFAULT = {"DDP001","DDP002","DDP003","DDP004","DDP005","DDP006","DDP007","DDP008","DDP009","DDP011","DDP012","DDP013",
           "DDP014","DDP016","DDP017","DDP018","DDP020","DDP024","DDP027","DDP034"}
UNJUDGED = {"DDP021": "performance advice outside the checklist; not judged"}
# manual matches: finding -> judgment (file, line)
MANUAL = {("pytorch-distributed/distributed_slurm_main.py",332,"DDP005"):("pytorch-distributed/distributed_slurm_main.py",237)}
FP = {
 ("XMem/model/trainer.py",162,"DDP012"):"caller guard: save_network/save_checkpoint only run where self.logger is not None, and the logger exists only on rank 0 (train.py:75-91, trainer.py:141-146, train.py:244)",
 ("XMem/model/trainer.py",168,"DDP012"):"caller guard: rank-0-only logger attribute (as 162)",
 ("XMem/model/trainer.py",172,"DDP012"):"caller guard: rank-0-only logger attribute (as 162)",
 ("XMem/model/trainer.py",183,"DDP012"):"caller guard: rank-0-only logger attribute (as 162)",
 ("XMem/model/trainer.py",167,"DDP005"):"caller guard: save_network only called under `if self.logger is not None` (logger built on rank 0 only)",
 ("XMem/model/trainer.py",182,"DDP005"):"caller guard: save_checkpoint only called under `if self.logger is not None` (rank 0 only)",
 ("XMem/train.py",220,"DDP014"):"the training loop (model.do_pass, optimizer step) taken for an evaluation loop; its losses are reduced in the trainer's Integrator anyway",
 ("build-nanogpt/train_gpt2.py",135,"DDP012"):"print in GPT.from_pretrained, which the script never calls (call commented out, line 340)",
 ("build-nanogpt/train_gpt2.py",318,"DDP011"):"same seed is harmless here: no dropout, no augmentation, deterministic sharded loader; identical init is what DDP wants; sampling uses a per-rank generator",
 ("build-nanogpt/train_gpt2.py",320,"DDP011"):"as 318 (cuda seed; no per-rank randomness consumer)",
 ("dino/eval_knn.py",222,"DDP004"):"loads features this script saved with .cpu() (lines 88-91): CPU tensors, map_location irrelevant",
 ("dino/eval_knn.py",223,"DDP004"):"as 222 (CPU tensors saved by the script)",
 ("dino/eval_knn.py",224,"DDP004"):"as 222 (CPU tensors saved by the script)",
 ("dino/eval_knn.py",225,"DDP004"):"as 222 (CPU tensors saved by the script)",
 ("dino/main_dino.py",279,"DDP007"):"module. keys are the repo's convention: restart_from_checkpoint loads back into the wrapped student; utils.load_pretrained_weights strips 'module.'",
 ("dino/main_dino.py",280,"DDP007"):"as 279 (teacher resumed into the same wrapping; evals strip the prefix)",
 ("distributed_tutorial/src/mnist-distributed.py",66,"DDP009"):"BatchNorm with 100 samples per GPU on MNIST: per-rank statistics are fine, SyncBN would not change the result meaningfully",
 ("moco/main_lincls.py",521,"DDP012"):"builtins.print replaced by a no-op on gpu != 0 in main_worker (lines 205-211) before validate runs",
 ("moco/main_moco.py",311,"DDP008"):"model is always DDP-wrapped: the unwrapped branches raise NotImplementedError (lines 280-288); resume of its own wrapped checkpoint",
 ("moco/main_moco.py",393,"DDP007"):"always wrapped (other branches raise); main_lincls strips 'module.encoder_q.' on purpose",
 ("pytorch-distributed/apex_distributed.py",278,"DDP006"):"single-node design: world size = torch.cuda.device_count() (nprocs, reduce_mean divides by it), so local rank = global rank",
 ("pytorch-distributed/distributed.py",218,"DDP006"):"single-node design: world size = local GPU count (as apex_distributed.py:278)",
 ("semseg/tool/train.py",159,"DDP024"):"DataParallel in the single-process branch (one GPU, distributed=False); DDP branch is separate",
 ("swav/eval_linear.py",219,"DDP007"):"resume path restart_from_checkpoint loads into the same wrapped linear_classifier: module. keys are consistent",
 ("swav/main_deepclusterv2.py",228,"DDP007"):"module. keys are the convention: resume loads into the wrapped model; eval_linear/eval_semisup strip 'module.'",
 ("swav/main_swav.py",241,"DDP007"):"as main_deepclusterv2.py:228",
 ("vq-vae-2-pytorch/train_vqvae.py",150,"DDP012"):"print(args) runs in the mp.spawn parent (before dist.launch), once",
 # opt-in rules
 ("vq-vae-2-pytorch/train_vqvae.py",109,"DDP033"):"dist.get_local_rank() is the rank inside the per-machine LOCAL_PROCESS_GROUP (distributed/launch.py:84-90): a true local rank; launch is single-node anyway",
 ("build-nanogpt/train_gpt2.py",154,"DDP028"):"inside GPT.from_pretrained, never called",
 ("nanoGPT/train.py",185,"DDP028"):"HF from_pretrained downloads under file locks in the hub cache; concurrent ranks are safe",
}
DDP030_REASON = "no destroy_process_group: the group is torn down at process exit; not a DDP problem in these scripts (at most a warning in new torch)"

J = list(csv.DictReader(open("judgments.tsv"), delimiter="\t"))
S = {r["local_file"]: r["split"] for r in csv.DictReader(open("sources.tsv"), delimiter="\t")}
def lines_of(j):
    ls = [int(j["line"])] + [int(x) for x in j["also_lines"].split(",") if x]
    return ls
rows = []
for mode in ("def", "all"):
    for lf in S:
        fn = f"{OUT}/{lf.replace('/', '_')}.{mode}.json"
        try: data = json.load(open(fn))
        except Exception: data = []
        for x in data:
            key = (lf, x["line"], x["code"]); verdict = None; match = ""; why = ""
            if key in MANUAL:
                verdict = "TRUE"; match = "%s:%d" % MANUAL[key]
            elif x["code"] in UNJUDGED:
                verdict = "UNJUDGED"; why = UNJUDGED[x["code"]]
            elif x["code"] == "DDP030":
                verdict = "FALSE"; why = DDP030_REASON
            else:
                cat = CAT.get(x["code"])
                for j in J:
                    if j["file"] != lf or j["category"] != cat: continue
                    if any(abs(x["line"] - l) <= (5 if i == 0 else 1) for i, l in enumerate(lines_of(j))):
                        verdict = "TRUE"; match = "%s:%s" % (j["file"], j["line"]); break
                if verdict is None:
                    if key in FP: verdict = "FALSE"; why = FP[key]
                    else: verdict = "??"
            rows.append(dict(mode=mode, file=lf, line=x["line"], code=x["code"], default=("yes" if x["code"] in DEFAULT else "no"),
                             split=S[lf], verdict=verdict, matches=match, reason=why))
with open("findings.tsv", "w") as f:
    w = csv.DictWriter(f, fieldnames=list(rows[0]), delimiter="\t"); w.writeheader(); w.writerows(rows)
unk = [r for r in rows if r["verdict"] == "??"]
for r in unk: print("UNJUDGED??", r)

def table(mode, split=None):
    c = collections.defaultdict(lambda: collections.Counter())
    for r in rows:
        if r["mode"] != mode or (split and r["split"] != split): continue
        if mode == "def" and r["default"] != "yes": continue
        c[r["code"]][r["verdict"]] += 1
    return c
def recall(mode, split=None, sev=None):
    found = collections.Counter(); tot = collections.Counter()
    hit = {r["matches"] for r in rows if r["mode"] == mode and r["verdict"] == "TRUE" and (mode != "def" or r["default"] == "yes")}
    for j in J:
        if split and S[j["file"]] != split: continue
        if sev and sev not in j["note"]: continue
        k = "%s:%s" % (j["file"], j["line"]); tot[j["category"]] += 1
        if k in hit: found[j["category"]] += 1
    return found, tot
out = []
for mode, name in (("def", "default rules"), ("all", "--select ALL")):
    for split in (None, "tuned", "held-out"):
        c = table(mode, split)
        out.append(f"\n#### Findings per rule, {name}, {split or 'all files'}\n\n| rule | findings | true | false | unjudged | precision |\n|---|---|---|---|---|---|")
        T = F = U = 0
        for code in sorted(c):
            t, fa, u = c[code]["TRUE"], c[code]["FALSE"], c[code]["UNJUDGED"]
            T += t; F += fa; U += u
            p = t / (t + fa) if t + fa else float("nan")
            out.append(f"| {code} | {t+fa+u} | {t} | {fa} | {u} | {p:.2f} |")
        out.append(f"| **total** | {T+F+U} | {T} | {F} | {U} | {T/(T+F) if T+F else float('nan'):.2f} |")
for split in (None, "tuned", "held-out"):
    out.append(f"\n#### Recall of judged problems by category, {split or 'all files'}\n\n| category | judged | found (default) | found (ALL) |\n|---|---|---|---|")
    fd, tot = recall("def", split); fa, _ = recall("all", split)
    for cat in sorted(tot):
        out.append(f"| {cat} | {tot[cat]} | {fd[cat]} | {fa[cat]} |")
    n = sum(tot.values()); out.append(f"| **total** | {n} | {sum(fd.values())} ({sum(fd.values())/n:.2f}) | {sum(fa.values())} ({sum(fa.values())/n:.2f}) |")
for sev in ("[major]", "[minor]"):
    fd, tot = recall("def", None, sev); fa, _ = recall("all", None, sev); n = sum(tot.values())
    out.append(f"\nRecall on {sev} judgments only: {n} judged, default {sum(fd.values())} ({sum(fd.values())/n:.2f}), ALL {sum(fa.values())} ({sum(fa.values())/n:.2f})")
hit_all = {r["matches"] for r in rows if r["mode"] == "all" and r["verdict"] == "TRUE"}
out.append("\n#### Judged problems missed by --select ALL\n")
for j in J:
    if "%s:%s" % (j["file"], j["line"]) not in hit_all:
        out.append(f"- {j['file']}:{j['line']} {j['category']} ({S[j['file']]}): {j['note']}")
open("tables.md", "w").write("\n".join(out) + "\n")
print("\n".join(out))
