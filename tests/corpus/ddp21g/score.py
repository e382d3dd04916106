"""Score ddpify findings (json written by run.sh under OUTDIR) against judgments.tsv.

Usage: python score.py OUTDIR [SUFFIX]   (writes findings{SUFFIX}.tsv and tables{SUFFIX}.md next to this script)
Copied from ../ddp21f/score.py (itself ../ddp21e's) (which findings are "default" is read from the default-rules run, <file>.def.json);
only the MANUAL/FP tables below differ (they are for the ddp21g files), plus DDP023 mapped to
other:module-of-unwrapped and DDP019 to other:params-changed-after-wrap in CAT.
Every finding not matching a judgment must be in MANUAL (same judged problem, another line), FP (false, with
its class and reason) or UNJUDGED; anything else is printed as UNJUDGED?? and must be judged before the tables
count. Matching: same file, the category of the rule (CAT), finding within +-5 lines of the judgment's main
line or +-1 of one of its also_lines.
"""
import csv, json, sys, collections, os
OUT = sys.argv[1]
SUFFIX = sys.argv[2] if len(sys.argv) > 2 else ""
CAT = {"DDP001": "missing-set-epoch", "DDP002": "shuffle-with-sampler", "DDP003": "missing-sampler",
       "DDP004": "load-no-map-location", "DDP005": "save-every-rank", "DDP006": "local-rank-guard",
       "DDP007": "module-keys", "DDP008": "module-keys", "DDP009": "unsynced-bn", "DDP011": "same-seed",
       "DDP012": "print-every-rank", "DDP013": "print-every-rank", "DDP014": "unreduced-metric",
       "DDP015": "other:padded-eval", "DDP016": "local-rank-arg", "DDP017": "cuda-device-0",
       "DDP018": "move-after-wrap", "DDP020": "other:accumulation-without-no-sync", "DDP024": "dataparallel",
       "DDP027": "asymmetric-collective", "DDP028": "other:download-every-rank",
       "DDP032": "other:local-rank-as-global-rank", "DDP033": "other:global-rank-as-device",
       "DDP034": "seed-in-parent", "DDP031": "other:workers-per-cpu-count",
       "DDP035": "other:sampler-seed-per-rank",
       "DDP023": "other:module-of-unwrapped", "DDP019": "other:params-changed-after-wrap"}
UNJUDGED = {"DDP021": "performance advice outside the checklist; not judged"}
DDP030_REASON = ("no destroy_process_group: the group is torn down at process exit; not a DDP problem in these "
                 "scripts (at most a warning in new torch)")
# a finding on another line of a judged problem -> that judgment (file, line)
MANUAL = {
 # glue-factory: with --detect_anomaly every rank prints the same 'param ... has no gradient.' lines: part of the grouped
 # every-rank console output judged at 273 (same category, another line)
 ("glue-factory/gluefactory/train.py", 497, "DDP012"): ("glue-factory/gluefactory/train.py", 273),
 # CodeBERT: the epoch loop (181) of the missing set_epoch judged at 189 (the inner loop over the per-file loaders)
 ("CodeBERT/CodeReviewer/code/run_finetune_cls.py", 181, "DDP001"): ("CodeBERT/CodeReviewer/code/run_finetune_cls.py", 189),
}
FP = {}
def fp(f, lines, code, cls, why):
    for l in lines:
        FP[(f, l, code)] = (cls, why)
# --- split A
fp("GaLore/torchrun_main.py", (130,), "DDP011", "common seed with nothing random to act on",
   "LLaMA from scratch: the model has no dropout (modeling_llama.py:223 dropout_p=0.0, no dropout layers), the C4 stream "
   "is tokenised without augmentation and GaLore's 'std' projection is an SVD; the shared seed only makes the initial "
   "weights identical, which DDP needs anyway")
fp("GaLore/torchrun_main.py", (196,), "DDP003", "sharded upstream of the loader",
   "the streaming dataset is split per rank by datasets.distributed.split_dataset_by_node (176-179) and per worker by "
   "PreprocessedIterableDataset (islice by worker id, peft_pretraining/dataloader.py:24): an IterableDataset takes no sampler")
fp("GaLore/torchrun_main.py", (183,), "DDP028", "hub download guarded by file locks",
   "AutoTokenizer.from_pretrained('t5-base') downloads through huggingface_hub, which serialises concurrent downloads "
   "of the same file with file locks into the shared cache")
fp("GaLore/torchrun_main.py", (198,), "DDP028", "local file, no download",
   "AutoConfig.from_pretrained(args.model_config) reads a local JSON (configs/llama_*.json)")
fp("glue-factory/gluefactory/train.py", (88,), "DDP012", "progress bar disabled by a rank argument",
   "tqdm(..., disable=not pbar) and every caller passes pbar=(rank == 0) (578, 620)")
fp("glue-factory/gluefactory/train.py", (392,), "DDP012", "never called",
   "print(output) is inside trace_handler, which nothing calls (the profiler uses tensorboard_trace_handler, 399)")
fp("glue-factory/gluefactory/train.py", (478,), "DDP012", "message about the rank's own event",
   "'Detected NAN, skipping iteration' is printed by the rank whose loss is NaN, about its own batch (its real problem, "
   "the skipped all_reduce, is judged at 480 as asymmetric-collective)")
fp("mace/mace/cli/run_train.py", (110,), "DDP011", "common seed with nothing random to act on",
   "MACE models have no dropout and the atomistic data no augmentation; the loaders' shuffles and the random train/valid "
   "split take explicitly seeded generators (torch.Generator().manual_seed(args.seed), np.random.default_rng(seed)) that "
   "must be equal on every rank; the global seed only fixes the initial weights, which DDP broadcasts anyway")
fp("rq-vae-transformer/main_stage1.py", (42,), "DDP016", "--local_rank argument whose value is never used",
   "rqvae/utils/dist.py:34 overwrites args.local_rank from LOCAL_RANK before anything uses it, so torchrun works; under "
   "torch>=2 torch.distributed.launch the unknown --local-rank=N goes to parse_known_args' extra_args and becomes a stray, "
   "unused key of the OmegaConf config (from_dotlist accepts it)")
fp("rq-vae-transformer/main_stage1.py", (103,), "DDP012", "rank test on a project's dist-env flag",
   "print(model) is under `if distenv.master:` (102); distenv.master is dist.get_rank() == 0 (rqvae/utils/dist.py:55)")
fp("rq-vae-transformer/rqvae/trainers/trainer.py", (131,), "DDP005", "rank test in the caller",
   "save_ckpt's only caller is run_epoch, under `if self.distenv.master:` (109, 117-118); distenv.master is global rank 0")
fp("DeepLearningExamples/PyTorch/Detection/SSD/main.py", (123,), "DDP016", "--local_rank argument taken from LOCAL_RANK",
   "its default is os.getenv('LOCAL_RANK', 0) and line 276 overwrites it from LOCAL_RANK again; the documented launch is "
   "torchrun (README, examples/*.sh)")
fp("DeepLearningExamples/PyTorch/Detection/SSD/main.py", (211,), "DDP001", "sampler of the evaluation loader",
   "the only DistributedSampler is the validation loader's (ssd/data.py:59), read by evaluate(); training uses the DALI "
   "reader, sharded by shard_id=rank with its own random_shuffle (ssd/coco_pipeline.py:38-46)")
# found at a3e2fd9 (split A)
fp("TorchSSL/models/fixmatch/fixmatch.py", (276,), "DDP005", "rank test in the caller",
   "save_model's every caller saves under `not args.multiprocessing_distributed or args.rank % ngpus_per_node == 0` "
   "(198 under 196-197, 217 under 213-214, and the launcher's fixmatch.py:257 under 255-256): one process per node "
   "saves, not every rank (the per-node duplication on multi-node runs is the local-rank-guard judged at 196)")
# --- split B
fp("TorchSSL/fixmatch.py", (134, 180, 181), "DDP012", "logger level set by a rank test",
   "get_logger(args.save_name, save_path, logger_level) gets level 'WARNING' unless args.rank % ngpus_per_node == 0 "
   "(97-101): logger.info prints on local rank 0 only (the per-node duplication is the local-rank-guard judged at 99)")
fp("mace/mace/tools/train.py", (480,), "DDP027", "rank-0-driven protocol matched by the other ranks",
   "in take_step_lbfgs rank 0 runs optimizer.step(closure) and broadcasts signal=1 (480) before each closure; the other "
   "ranks sit in a loop receiving that broadcast (518-524) and run the same closure, and rank 0's final signal=0 (516) "
   "ends their loop: every broadcast has its partner")
fp("openvla/vla-scripts/finetune.py", (157, 158, 338), "DDP028", "hub download guarded by file locks",
   "AutoProcessor/AutoModelForVision2Seq.from_pretrained download through huggingface_hub, which serialises concurrent "
   "downloads of the same file with file locks (338 reads the cache filled at 158)")
fp("openvla/vla-scripts/finetune.py", (341,), "DDP028", "local file, no download",
   "PeftModel.from_pretrained(base_vla, adapter_dir) reads the adapter the main process just saved locally (330, barrier 333)")
fp("openvla/vla-scripts/finetune.py", (333, 364), "DDP022", "process group initialised by a library",
   "accelerate's PartialState() (119) initialises the process group under torchrun (the README's only launch, also for one "
   "GPU); the DDP wrap at 185 needs it too")
fp("nnUNet/nnunetv2/training/nnUNetTrainer/nnUNetTrainer.py", (110,), "DDP012", "print in the non-distributed branch",
   "print(f'Using device: ...') is in the else branch of `if self.is_ddp:` (101-110): single process only")
fp("Trainer/trainer/trainer.py", (571,), "DDP033", "single-node launcher by construction",
   "trainer/distribute.py starts one process per visible GPU on this machine with --rank=i, and init_distributed uses "
   "world_size = num_gpus = torch.cuda.device_count() and set_device(rank % device_count) (utils/distributed.py:62-68): "
   "the global rank is the local GPU index")
fp("Trainer/trainer/trainer.py", (932, 973, 1014, 1056, 1070, 1492, 1515, 1656, 1692, 1711), "DDP023",
   "wrap condition equals the .module condition",
   "every self.model.module is under `if self.num_gpus > 1`; with num_gpus > 1 the model is wrapped, in DDP_th (use_pt_ddp "
   "= num_gpus > 1 and not use_accelerate, 570-571) or by accelerator.prepare (setup_accelerate, 600-610)")
fp("Trainer/trainer/trainer.py", (1962,), "DDP023", "unwrapped in the same expression",
   "`hasattr(self.model, 'module') and isimplemented(self.model.module, ...)`")
fp("fairchem/src/fairchem/core/trainers/base_trainer.py", (766,), "DDP007", "project loader reconciles the prefix",
   "load_checkpoint maps the checkpoint's 'module.' count onto the model's with match_state_dict "
   "(common/utils.py:1196-1221) before load_state_dict (629-631), so DDP and single-process checkpoints load either way")
# A finding on a line that a judgment lists (so the matcher would count it true) but that is false.
FORCED_FP = {
}

here = os.path.dirname(os.path.abspath(__file__))
J = list(csv.DictReader(open(os.path.join(here, "judgments.tsv")), delimiter="\t"))
S = {r["local_file"]: r["split"] for r in csv.DictReader(open(os.path.join(here, "sources.tsv")), delimiter="\t")}
RC = {}
def lines_of(j):
    return [int(j["line"])] + [int(x) for x in j["also_lines"].split(",") if x]
def load(lf, mode):
    try: return json.load(open(f"{OUT}/{lf.replace('/', '_')}.{mode}.json"))
    except Exception: return []
DEFKEYS = {(lf, x["line"], x["code"]) for lf in S for x in load(lf, "def")}
rows = []
for mode in ("def", "all"):
    for lf in S:
        base = f"{OUT}/{lf.replace('/', '_')}.{mode}"
        try:
            RC[(lf, mode)] = open(base + ".rc").read().split()
        except OSError:
            RC[(lf, mode)] = ["?", "?"]
        for x in load(lf, mode):
            key = (lf, x["line"], x["code"]); verdict = None; match = ""; why = ""; cls = ""
            if key in FORCED_FP:
                verdict = "FALSE"; cls, why = FORCED_FP[key]
            elif key in MANUAL:
                verdict = "TRUE"; match = "%s:%d" % MANUAL[key]
            elif x["code"] in UNJUDGED:
                verdict = "UNJUDGED"; why = UNJUDGED[x["code"]]
            elif x["code"] == "DDP030":
                verdict = "FALSE"; cls = "process group not destroyed"; why = DDP030_REASON
            else:
                cat = CAT.get(x["code"])
                best = None  # the nearest judgment of that category (main line +-5, also_lines +-1)
                for j in J:
                    if j["file"] != lf or j["category"] != cat: continue
                    d = min((abs(x["line"] - l) for i, l in enumerate(lines_of(j))
                             if abs(x["line"] - l) <= (5 if i == 0 else 1)), default=None)
                    if d is not None and (best is None or d < best[0]): best = (d, j)
                if best:
                    verdict = "TRUE"; match = "%s:%s" % (best[1]["file"], best[1]["line"])
                if verdict is None:
                    if key in FP: verdict = "FALSE"; cls, why = FP[key]
                    else: verdict = "??"
            rows.append(dict(mode=mode, file=lf, line=x["line"], code=x["code"],
                             default=("yes" if key in DEFKEYS else "no"), split=S[lf], verdict=verdict,
                             matches=match, fp_class=cls, reason=why))
with open(os.path.join(here, f"findings{SUFFIX}.tsv"), "w") as f:
    w = csv.DictWriter(f, fieldnames=["mode", "file", "line", "code", "default", "split", "verdict", "matches",
                                      "fp_class", "reason"], delimiter="\t", lineterminator="\n")
    w.writeheader(); w.writerows(rows)
unk = [r for r in rows if r["verdict"] == "??"]
for r in unk: print("UNJUDGED??", r)
unused = [k for k in list(FP) + list(MANUAL) + list(FORCED_FP) if not any((r["file"], r["line"], r["code"]) == k for r in rows)]
for k in unused: print("stale FP/MANUAL entry (no such finding):", k)

SPLITS = (None, "A", "B")
def sname(s): return {None: "all files", "A": "split A", "B": "split B (second half)"}[s]
def table(mode, split=None):
    c = collections.defaultdict(collections.Counter)
    for r in rows:
        if r["mode"] != mode or (split and r["split"] != split): continue
        c[r["code"]][r["verdict"]] += 1
    return c
def hits(mode):
    return {r["matches"] for r in rows if r["mode"] == mode and r["verdict"] == "TRUE"}
def recall(mode, split=None, sev=None):
    found = collections.Counter(); tot = collections.Counter(); hit = hits(mode)
    for j in J:
        if split and S[j["file"]] != split: continue
        if sev and sev not in j["note"]: continue
        k = "%s:%s" % (j["file"], j["line"]); tot[j["category"]] += 1
        if k in hit: found[j["category"]] += 1
    return found, tot
def pct(a, b): return f"{a/b:.2f}" if b else "n/a"
out = []
repos = {r["local_file"]: r["repo"] for r in csv.DictReader(open(os.path.join(here, "sources.tsv")), delimiter="\t")}
out.append("#### Headline\n\n| | findings | true | false | unjudged | precision | judged problems | found | recall |\n"
           "|---|---|---|---|---|---|---|---|---|")
for mode, name in (("def", "default rules"), ("all", "--select ALL")):
    for split in SPLITS:
        rs = [r for r in rows if r["mode"] == mode and (not split or r["split"] == split)]
        T = sum(r["verdict"] == "TRUE" for r in rs); F = sum(r["verdict"] == "FALSE" for r in rs)
        U = len(rs) - T - F
        fd, tot = recall(mode, split); n = sum(tot.values()); fnd = sum(fd.values())
        out.append(f"| {name}, {sname(split)} | {len(rs)} | {T} | {F} | {U} | {pct(T, T + F)} | {n} | {fnd} | {pct(fnd, n)} |")
out.append("\n#### Corpus\n\n| split | files | repositories | judged problems | [major] | added after |\n|---|---|---|---|---|---|")
for split in SPLITS:
    fs = [f for f in S if not split or S[f] == split]
    js = [j for j in J if j["file"] in fs]
    out.append(f"| {sname(split)} | {len(fs)} | {len({repos[f] for f in fs})} | {len(js)} | "
               f"{sum('[major]' in j['note'] for j in js)} | {sum(j['added_after'] == 'yes' for j in js)} |")
slow = [(lf, m, RC[(lf, m)]) for (lf, m) in RC if RC[(lf, m)][0] != "0"]
secs = [(lf, m, int(RC[(lf, m)][1])) for (lf, m) in RC if RC[(lf, m)][1].isdigit()]
out.append("\nChecks: %d, all exit status 0: %s; seconds per check: max %d (%s), total %d" % (
    len(RC), "yes" if not slow else "no", max(s for _, _, s in secs), max(secs, key=lambda t: t[2])[0],
    sum(s for _, _, s in secs)))
if slow:
    out.append("Checks that did not finish normally (rc, seconds): " +
               "; ".join(f"{lf} [{m}] rc={rc[0]} {rc[1]}s" for lf, m, rc in slow))
for mode, name in (("def", "default rules"), ("all", "--select ALL")):
    for split in SPLITS:
        c = table(mode, split)
        out.append(f"\n#### Findings per rule, {name}, {sname(split)}\n\n| rule | findings | true | false | unjudged | precision |\n|---|---|---|---|---|---|")
        T = F = U = 0
        for code in sorted(c):
            t, fa, u = c[code]["TRUE"], c[code]["FALSE"], c[code]["UNJUDGED"] + c[code]["??"]
            T += t; F += fa; U += u
            out.append(f"| {code} | {t+fa+u} | {t} | {fa} | {u} | {pct(t, t+fa)} |")
        out.append(f"| **total** | {T+F+U} | {T} | {F} | {U} | {pct(T, T+F)} |")
for split in SPLITS:
    out.append(f"\n#### Recall of judged problems by category, {sname(split)}\n\n| category | judged | found (default) | found (ALL) |\n|---|---|---|---|")
    fd, tot = recall("def", split); fa, _ = recall("all", split)
    for cat in sorted(tot):
        out.append(f"| {cat} | {tot[cat]} | {fd[cat]} | {fa[cat]} |")
    n = sum(tot.values())
    out.append(f"| **total** | {n} | {sum(fd.values())} ({pct(sum(fd.values()), n)}) | {sum(fa.values())} ({pct(sum(fa.values()), n)}) |")
for sev in ("[major]", "[minor]"):
    fd, tot = recall("def", None, sev); fa, _ = recall("all", None, sev); n = sum(tot.values())
    out.append(f"\nRecall on {sev} judgments only: {n} judged, default {sum(fd.values())} ({pct(sum(fd.values()), n)}), "
               f"ALL {sum(fa.values())} ({pct(sum(fa.values()), n)})")
before = [j for j in J if j["added_after"] != "yes"]
hd = hits("def"); ha = hits("all")
nb = len(before); fdb = sum("%s:%s" % (j["file"], j["line"]) in hd for j in before)
fab = sum("%s:%s" % (j["file"], j["line"]) in ha for j in before)
out.append(f"\nRecall on the judgments written before the run only: {nb} judged, default {fdb} ({pct(fdb, nb)}), ALL {fab} ({pct(fab, nb)})")
defcats = {CAT[c] for c in {r["code"] for r in rows if r["default"] == "yes"} if c in CAT} | \
          {"missing-set-epoch", "shuffle-with-sampler", "missing-sampler", "load-no-map-location", "save-every-rank",
           "local-rank-guard", "module-keys", "unsynced-bn", "same-seed", "print-every-rank", "unreduced-metric",
           "local-rank-arg", "cuda-device-0", "move-after-wrap", "dataparallel", "asymmetric-collective",
           "seed-in-parent"}
for split in SPLITS:
    jj = [j for j in J if j["category"] in defcats and (not split or S[j["file"]] == split)]
    n = len(jj); fd = sum("%s:%s" % (j["file"], j["line"]) in hd for j in jj)
    out.append(f"\nRecall, categories a default rule targets (no other:*), {sname(split)}: {n} judged, default rules find {fd} ({pct(fd, n)})")
out.append("\n#### False positives by class (file:line rule: cause)\n")
byc = collections.defaultdict(list)
for r in rows:
    if r["verdict"] == "FALSE" and r["mode"] == "all":
        byc[r["fp_class"]].append(r)
for cls in sorted(byc, key=lambda k: -len(byc[k])):
    rs = byc[cls]; nd = sum(r["default"] == "yes" for r in rs)
    out.append(f"- **{cls}** ({len(rs)} findings, {nd} from default rules)")
    seen = collections.OrderedDict()
    for r in rs:
        seen.setdefault((r["file"], r["code"], r["reason"]), []).append(r["line"])
    for (f, code, why), ls in seen.items():
        out.append(f"  - {f}:{','.join(map(str, ls))} {code}: {why}")
out.append("\n#### Judged problems missed by the default rules (marked * when --select ALL finds them)\n")
for j in J:
    k = "%s:%s" % (j["file"], j["line"])
    if k not in hd:
        out.append(f"- {'*' if k in ha else ''}{j['file']}:{j['line']} {j['category']} (split {S[j['file']]}"
                   f"{', added after' if j['added_after'] == 'yes' else ''}): {j['note']}")
open(os.path.join(here, f"tables{SUFFIX}.md"), "w").write("\n".join(out) + "\n")
print("\n".join(out))
