"""Score ddpify findings (json written by run.sh under OUTDIR) against judgments.tsv.

Usage: python score.py OUTDIR [SUFFIX]   (writes findings{SUFFIX}.tsv and tables{SUFFIX}.md next to this script)
Copied from ../ddp21d/score.py (itself ../ddp21c's) (which findings are "default" is read from the default-rules run, <file>.def.json);
only the MANUAL/FP tables below differ: they are for the ddp21e files.
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
       "DDP034": "seed-in-parent", "DDP031": "other:workers-per-cpu-count"}
UNJUDGED = {"DDP021": "performance advice outside the checklist; not judged"}
DDP030_REASON = ("no destroy_process_group: the group is torn down at process exit; not a DDP problem in these "
                 "scripts (at most a warning in new torch)")
# a finding on another line of a judged problem -> that judgment (file, line)
MANUAL = {
 # 'Undefined model' error print in every process: the grouped every-rank console/log output judged at 233
 ("BiRefNet/train.py", 112, "DDP012"): ("BiRefNet/train.py", 233),
 # inside setup_seed, called with opt.seed in every rank (247): the same-seed problem judged at 25
 ("HybrIK/scripts/train_smpl.py", 226, "DDP011"): ("HybrIK/scripts/train_smpl.py", 25),
 ("HybrIK/scripts/train_smpl.py", 227, "DDP011"): ("HybrIK/scripts/train_smpl.py", 25),
 ("HybrIK/scripts/train_smpl.py", 228, "DDP011"): ("HybrIK/scripts/train_smpl.py", 25),
 # the wandb guard `rank == 0 and args.wb` (local rank) of the grouped local-rank-guard judgment at 590
 ("doctr/references/recognition/train.py", 501, "DDP006"): ("doctr/references/recognition/train.py", 590),
 # fp16 warning printed by every spawned rank: the every-rank output judged at 184
 ("HigherHRNet-Human-Pose-Estimation/tools/dist_train.py", 140, "DDP012"): ("HigherHRNet-Human-Pose-Estimation/tools/dist_train.py", 184),
 # added at the 72f2016 re-run: DDP016 on `args, cfg = merge_config()` (merge_config -> get_args declares
 # --local_rank, default 0, utils/common.py:20): the [major] local-rank-arg problem judged at 107 (set_device/device_ids
 # from args.local_rank, which stays 0 under torchrun), reported on the line that parses the arguments
 ("Ultra-Fast-Lane-Detection/train.py", 98, "DDP016"): ("Ultra-Fast-Lane-Detection/train.py", 107),
}
FP = {}
def fp(f, lines, code, cls, why):
    for l in lines:
        FP[(f, l, code)] = (cls, why)
fp("PyTorch-Encoding/experiments/segmentation/train_dist.py", (263,), "DDP014", "reduction in a project helper",
   "the pixAcc/mIoU counts are summed across ranks by utils.torch_dist_sum (encoding/utils/dist_helper.py:15-28: "
   "dist.all_reduce of every tensor) before get_pixacc_miou, at 271 and 277 (the real problem there is the sampler's "
   "padding, judged as other:padded-eval at 175)")
fp("conditional-flow-matching/examples/images/cifar10/train_cifar10_ddp.py", (93,), "DDP002",
   "shuffle and sampler under complementary conditions",
   "sampler = DistributedSampler(dataset) if FLAGS.parallel else None and shuffle=False if FLAGS.parallel else True: "
   "shuffle is True only when the sampler is None, so the DataLoader never gets both")
fp("conditional-flow-matching/examples/images/cifar10/train_cifar10_ddp.py", (192, 193), "DDP007",
   "the project's loader strips 'module.'",
   "the checkpoint's only consumer, compute_fid.py (52-62), loads the state dict as is and on failure strips 'module.' "
   "from every key: both kinds of checkpoint load; the script never resumes from it")
fp("CLIP-Driven-Universal-Model/train.py", (67, 70), "DDP012", "print in a function nobody calls",
   "validation() is defined but never called in train.py (process() only trains and saves); its tqdm and print never run")
REDIRECT = ("main_worker sets sys.stdout = sys.stderr = open(os.devnull) when LOCAL_RANK != 0 (162-164), before any "
            "print: only local rank 0 prints (once per node on a multi-node torchrun, each node's own console)")
fp("tutorials/acceleration/distributed_training/brats_training_ddp.py", (280, 284, 285, 287, 299, 305, 307, 330),
   "DDP012", "stdout redirected to devnull on the other ranks", REDIRECT)
OPTLOG = ("opt.log is the rank test set by init_dist (hybrik/utils/env.py: rank % ngpus_per_node == 0 for the pytorch "
          "launcher, whose world size is capped at the local GPU count (hybrik/opt.py:73-75, so one node), rank == 0 for "
          "slurm): only one process runs it")
fp("HybrIK/scripts/train_smpl.py", (40,), "DDP012", "rank test stored in a flag", OPTLOG + " (`if opt.log: tqdm(...)`)")
fp("HybrIK/scripts/train_smpl.py", (286,), "DDP013", "rank test stored in a flag", OPTLOG + " (`if opt.log: SummaryWriter`)")
fp("HybrIK/scripts/train_smpl.py", (335, 343, 346), "DDP005", "rank test stored in a flag",
   OPTLOG + " (the snapshot/best saves are under `if opt.log:`; the unguarded final save at 352 is the real one)")
fp("HybrIK/scripts/train_smpl.py", (106,), "DDP015", "padding deduplicated by id",
   "validate_gt stores predictions in a dict keyed by image id (kpt_pred[int(img_ids[i])], merged with update on rank "
   "0): the padded repeats overwrite the same entries and each image is evaluated once")
fp("Maskgit-pytorch/Trainer/cls_trainer.py", (138,), "DDP023", "`.module` of a project class that always has it",
   "model is the project's EMA wrapper (Network/ema.py: self.module = deepcopy(model)), which always has .module, "
   "wrapped in DDP or not")
SINGLE = ("examples/classification/main.py launches with mp.spawn over torch.cuda.device_count() GPUs of one machine "
          "(openpoints/utils/dist_utils.get_dist_info: 'only supports 1 node for now', world_size = device_count, "
          "rank = the spawn index): cfg.rank is both the local and the global rank")
fp("PointNeXt/examples/classification/train.py", (54,), "DDP032", "single-node launcher by construction", SINGLE)
fp("PointNeXt/examples/classification/train.py", (61, 204), "DDP006", "single-node launcher by construction", SINGLE)
fp("doctr/references/recognition/train.py", (315,), "DDP028", "local path, not a download",
   "--resume is 'Path to your checkpoint' (694); from_pretrained only downloads when given a URL")
fp("HigherHRNet-Human-Pose-Estimation/tools/dist_train.py", (303, 314), "DDP023", "unwrapped branch cannot run",
   "the only unwrapped branch is `elif args.gpu is not None` without distribution, where args.gpu is the joined string "
   "','.join(cfg.GPUS) (119) and torch.cuda.set_device(args.gpu) fails first; the DDP and DataParallel branches both "
   "have .module")
fp("PyTorch-StudioGAN/src/loader.py", (450,), "DDP001", "not an epoch loop",
   "`for e in range(cfgs.RUN.num_eval)` repeats the final evaluation; the training loop sets the sampler epoch through "
   "worker.prepare_train_iter (worker.py:191,200)")
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
