"""Score ddpify findings (json written by run.sh under OUTDIR) against judgments.tsv.

Usage: python score.py OUTDIR [SUFFIX]   (writes findings{SUFFIX}.tsv and tables{SUFFIX}.md next to this script;
       e.g. SUFFIX=_main for the re-run against main after l21: findings_main.tsv, tables_main.md)
Adapted from ../ddp21/score.py: splits A/B instead of tuned/held-out, every finding not matching a
judgment must be in MANUAL (same problem, another line), FP (false, with its class and reason) or
UNJUDGED; anything else is printed as UNJUDGED?? and must be judged before the tables count.
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
       "DDP034": "seed-in-parent"}
DEFAULT = {"DDP001", "DDP002", "DDP003", "DDP004", "DDP005", "DDP006", "DDP007", "DDP008", "DDP009", "DDP011",
           "DDP012", "DDP013", "DDP014", "DDP016", "DDP017", "DDP018", "DDP020", "DDP024", "DDP027", "DDP034"}
UNJUDGED = {"DDP021": "performance advice outside the checklist; not judged"}
DDP030_REASON = ("no destroy_process_group: the group is torn down at process exit; not a DDP problem in these "
                 "scripts (at most a warning in new torch)")
# a finding on another line of a judged problem -> that judgment (file, line)
MANUAL = {
 ("FixMatch-pytorch/train.py", 40, "DDP011"): ("FixMatch-pytorch/train.py", 176),   # cuda half of the same set_seed
 ("HRNet-Semantic-Segmentation/tools/train.py", 68, "DDP012"): ("HRNet-Semantic-Segmentation/tools/train.py", 75),
 ("LoRA/examples/NLG/src/gpt2_ft.py", 151, "DDP014"): ("LoRA/examples/NLG/src/gpt2_ft.py", 233),  # the loop of evaluate()
 ("stylegan2-pytorch/stylegan2_pytorch/stylegan2_pytorch.py", 1404, "DDP012"):
     ("stylegan2-pytorch/stylegan2_pytorch/stylegan2_pytorch.py", 958),
}
PRINT_OVERRIDE = "print already rank-limited by the project's print override"
VAR_PRINT = ("builtins.print is replaced by utils/misc._change_builtin_print(dist.is_local_master()) inside "
             "misc.init_distributed_mode, which arg_util.init_dist_and_get_args runs at train.py:172 before any "
             "of these prints (one copy per node, by design)")
FP = {}
for l in (36, 37, 41, 64, 65, 70, 71, 104, 106, 107, 122, 157, 216, 233, 239, 240, 241, 248):
    FP[("VAR/train.py", l, "DDP012")] = (PRINT_OVERRIDE, VAR_PRINT)
for l in (189, 190, 201):
    FP[("VAR/trainer.py", l, "DDP012")] = (PRINT_OVERRIDE, "VARTrainer is built and driven by train.py after the "
                                           "print override (misc._change_builtin_print, train.py:172)")
for l in (165, 167, 175):
    FP[("stylegan2-pytorch/stylegan2_pytorch/cli.py", l, "DDP012")] = (
        "single-process code path", "generate / generate_interpolation branch: one process, returns before mp.spawn")
FP[("stylegan2-pytorch/stylegan2_pytorch/stylegan2_pytorch.py", 1315, "DDP012")] = (
    "single-process code path", "tqdm in generate_interpolation, only called from cli.py:174 (single process, no DDP)")
FP[("stylegan2-pytorch/stylegan2_pytorch/stylegan2_pytorch.py", 1349, "DDP012")] = (
    "rank test in the caller", "print_log is only called under `if is_main` (cli.py:63-64)")
FP[("YOLOv6/yolov6/core/engine.py", 570, "DDP005")] = (
    "rank test in the caller", "nested save_calib_model is only called inside `if self.main_process:` (engine.py:572-577)")
FP[("YOLOv6/yolov6/core/engine.py", 80, "DDP008")] = (
    "load before the wrap", "resume loads into the plain model in __init__; parallel_model wraps it later (engine.py:95)")
FP[("YOLOv6/yolov6/core/engine.py", 593, "DDP008")] = (
    "load before the wrap", "quant_setup runs in __init__ (engine.py:65) on the plain model, before parallel_model (engine.py:95)")
FP[("YOLOv6/yolov6/core/engine.py", 466, "DDP009")] = (
    "per-GPU BatchNorm by design", "YOLO detectors train with per-GPU BN (the repository has no SyncBN option; eval uses the EMA "
    "model); a speed/accuracy trade-off, not a defect")
FP[("SimCLR/main.py", 118, "DDP024")] = (
    "DataParallel as the single-process alternative", "nn.DataParallel only in the args.dataparallel mode, the documented "
    "single-node alternative to DDP (config dataparallel: 0); the DDP branch is separate")
FP[("LoRA/examples/NLG/src/gpt2_ft.py", 324, "DDP004")] = (
    "checkpoint holds CPU tensors", "init_checkpoint is the Hugging Face GPT-2 pytorch_model.bin (download script), saved on CPU")
FP[("hifi-gan/train.py", 29, "DDP011")] = (
    "same seed without a consumer", "only the CUDA RNG is seeded in the workers; nothing in the step draws from it (no dropout in "
    "HiFi-GAN; crops use python random in DataLoader workers whose base seed comes from the unseeded CPU RNG of each spawned process)")
# opt-in rules
for l in (258, 298, 303, 312):
    FP[("HRNet-Semantic-Segmentation/tools/train.py", l, "DDP023")] = (
        "model always has .module", "the non-distributed branch wraps the model in nn.DataParallel (line 213), which has .module too")
FP[("awesome-semantic-segmentation-pytorch/scripts/train.py", 258, "DDP023")] = (
    "model always has .module", "self.model.module taken under `if self.args.distributed`, the flag that wrapped it (line 192)")
FP[("detr/main.py", 147, "DDP015")] = (
    "padding deduplicated", "CocoEvaluator.synchronize_between_processes keeps unique image ids (datasets/coco_eval.py:186)")
for l in (967, 968, 997, 998, 1007, 1034, 1035, 1043, 1088, 1089, 1100, 1186, 1187, 1206, 1209, 1253, 1254, 1271, 1276,
          1308, 1309, 1310):
    FP[("stylegan2-pytorch/stylegan2_pytorch/stylegan2_pytorch.py", l, "DDP033")] = (
        "single-node design", "cli.py spawns world_size = torch.cuda.device_count() processes with MASTER_ADDR=localhost: rank = local rank")

# judged after the re-run against main (commit 57a6977, RESULTS_main.md): RobustVideoMatting's check now finishes
for l in (319, 327, 375, 376, 377, 402, 403, 459, 460, 461):
    FP[("RobustVideoMatting/train.py", l, "DDP033")] = (
        "single-node design", "__main__ runs mp.spawn(Trainer, nprocs=world_size=torch.cuda.device_count()) and "
        "init_process_group(rank=spawn index, world_size=device_count) (train.py:181, 501-505): no node rank exists, rank = local rank")

here = os.path.dirname(os.path.abspath(__file__))
J = list(csv.DictReader(open(os.path.join(here, "judgments.tsv")), delimiter="\t"))
S = {r["local_file"]: r["split"] for r in csv.DictReader(open(os.path.join(here, "sources.tsv")), delimiter="\t")}
RC = {}
def lines_of(j):
    return [int(j["line"])] + [int(x) for x in j["also_lines"].split(",") if x]
rows = []
for mode in ("def", "all"):
    for lf in S:
        base = f"{OUT}/{lf.replace('/', '_')}.{mode}"
        try:
            RC[(lf, mode)] = open(base + ".rc").read().split()
        except OSError:
            RC[(lf, mode)] = ["?", "?"]
        try: data = json.load(open(base + ".json"))
        except Exception: data = []
        for x in data:
            key = (lf, x["line"], x["code"]); verdict = None; match = ""; why = ""; cls = ""
            if key in MANUAL:
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
                             default=("yes" if x["code"] in DEFAULT else "no"), split=S[lf], verdict=verdict,
                             matches=match, fp_class=cls, reason=why))
with open(os.path.join(here, f"findings{SUFFIX}.tsv"), "w") as f:
    w = csv.DictWriter(f, fieldnames=list(rows[0]), delimiter="\t", lineterminator="\n"); w.writeheader(); w.writerows(rows)
unk = [r for r in rows if r["verdict"] == "??"]
for r in unk: print("UNJUDGED??", r)
unused = [k for k in list(FP) + list(MANUAL) if not any((r["file"], r["line"], r["code"]) == k for r in rows)]
for k in unused: print("stale FP/MANUAL entry (no such finding):", k)

SPLITS = (None, "A", "B")
def sname(s): return {None: "all files", "A": "split A", "B": "split B (second half)"}[s]
def table(mode, split=None):
    c = collections.defaultdict(collections.Counter)
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
def pct(a, b): return f"{a/b:.2f}" if b else "n/a"
out = []
out.append("#### Corpus\n\n| split | files | repositories | judged problems | [major] |\n|---|---|---|---|---|")
repos = {r["local_file"]: r["repo"] for r in csv.DictReader(open(os.path.join(here, "sources.tsv")), delimiter="\t")}
for split in SPLITS:
    fs = [f for f in S if not split or S[f] == split]
    js = [j for j in J if j["file"] in fs]
    out.append(f"| {sname(split)} | {len(fs)} | {len({repos[f] for f in fs})} | {len(js)} | {sum('[major]' in j['note'] for j in js)} |")
slow = [(lf, m, RC[(lf, m)]) for (lf, m) in RC if RC[(lf, m)][0] not in ("0",)]
if slow:
    out.append("\nChecks that did not finish normally (rc, seconds): " +
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
hit_def = {r["matches"] for r in rows if r["mode"] == "def" and r["verdict"] == "TRUE" and r["default"] == "yes"}
for sev in ("[major]", "[minor]"):
    fd, tot = recall("def", None, sev); fa, _ = recall("all", None, sev); n = sum(tot.values())
    out.append(f"\nRecall on {sev} judgments only: {n} judged, default {sum(fd.values())} ({pct(sum(fd.values()), n)}), "
               f"ALL {sum(fa.values())} ({pct(sum(fa.values()), n)})")
# the default set's own checklist: judged problems whose category a default rule targets
defcats = {CAT[c] for c in DEFAULT if c in CAT}
timed_out = {lf for (lf, m), rc in RC.items() if m == "def" and rc[0] == "124"}
for label, keep in (("default-checklist categories only", lambda j: j["category"] in defcats),
                    ("default-checklist categories, files whose check finished", lambda j: j["category"] in defcats and j["file"] not in timed_out)):
    js = [j for j in J if keep(j)]
    for split in SPLITS:
        jj = [j for j in js if not split or S[j["file"]] == split]
        n = len(jj); fd = sum("%s:%s" % (j["file"], j["line"]) in hit_def for j in jj)
        out.append(f"\nRecall, {label}, {sname(split)}: {n} judged, default rules find {fd} ({pct(fd, n)})")
out.append("\n#### False positives by class (file:line rule: cause)\n")
byc = collections.defaultdict(list)
for r in rows:
    if r["verdict"] == "FALSE" and (r["mode"] == "all"):
        byc[r["fp_class"]].append(r)
for cls in sorted(byc, key=lambda k: -len(byc[k])):
    rs = byc[cls]; nd = sum(r["default"] == "yes" for r in rs)
    out.append(f"- **{cls}** ({len(rs)} findings, {nd} from default rules)")
    seen = collections.OrderedDict()
    for r in rs:
        seen.setdefault((r["file"], r["code"], r["reason"]), []).append(r["line"])
    for (f, code, why), ls in seen.items():
        out.append(f"  - {f}:{','.join(map(str, ls))} {code}: {why}")
hit_def = {r["matches"] for r in rows if r["mode"] == "def" and r["verdict"] == "TRUE" and r["default"] == "yes"}
hit_all = {r["matches"] for r in rows if r["mode"] == "all" and r["verdict"] == "TRUE"}
out.append("\n#### Judged problems missed by the default rules (marked * when --select ALL finds them)\n")
for j in J:
    k = "%s:%s" % (j["file"], j["line"])
    if k not in hit_def:
        out.append(f"- {'*' if k in hit_all else ''}{j['file']}:{j['line']} {j['category']} (split {S[j['file']]}"
                   f"{', added after' if j['added_after'] == 'yes' else ''}): {j['note']}")
open(os.path.join(here, f"tables{SUFFIX}.md"), "w").write("\n".join(out) + "\n")
print("\n".join(out))
