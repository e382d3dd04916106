"""Score ddpify findings (json written by run.sh under OUTDIR) against judgments.tsv.

Usage: python score.py OUTDIR [SUFFIX]
Copied from ../ddp21m/score.py (itself ../ddp21l's); the MANUAL/FP tables are for the ddp21o files, and split B
(held out) is kept out of git: its MANUAL/FP entries are read from $HELDOUT/heldout_tables.py (default
/work/corpus-ddp21o/_heldout<SUFFIX>), every finding with its verdict goes to $HELDOUT/findings_all<SUFFIX>.tsv and
the full tables to $HELDOUT/tables_full<SUFFIX>.md; next to this script only findings<SUFFIX>.tsv (split A rows) and
tables<SUFFIX>.md (split A details, split B aggregates) are written.
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
       "DDP036": "unreduced-metric", "DDP037": "other:write-every-rank",
       "DDP023": "other:module-of-unwrapped", "DDP019": "other:params-changed-after-wrap"}
UNJUDGED = {"DDP021": "performance advice outside the checklist; not judged"}
DDP030_REASON = ("no destroy_process_group: the group is torn down at process exit; not a DDP problem in these "
                 "scripts (at most a warning in new torch)")
# a finding on another line of a judged problem -> that judgment (file, line)   (split A; split B's live in HELDOUT)
MANUAL = {
}
FP = {}
def fp(f, lines, code, cls, why):
    for l in lines:
        FP[(f, l, code)] = (cls, why)
# --- split A (split B's entries are in HELDOUT/heldout_tables.py, outside git)
# (filled in after the run)
RN = "retinanet-examples/odtk/train.py"
fp(RN, (62, 75, 78, 80, 81, 82), "DDP012", "print already master-only through a rank-0 flag",
   "every print is under `if verbose:`, and main.py's worker passes verbose=(rank == 0) to train.train")
EG = "EGG/egg/core/trainers.py"
fp(EG, (92,), "DDP012", "per-rank line that carries its rank",
   "'# Distributed context' prints each process's DistributedContext (rank, local_rank, world_size): a per-rank "
   "diagnostic line by design, not N copies of one line")
fp(EG, (307,), "DDP008", "checkpoint key layout is consistent",
   "checkpoints are always loaded before the DDP wrap (load_from_checkpoint at 88, load_from_latest at 103, wrap at "
   "145) and CheckpointSaver saves trainer.game.module's state_dict when distributed, so keys never carry 'module.'")
AS = "adaptive-span/main.py"
fp(AS, (98, 141), "DDP022", "collective guarded by the distributed flag",
   "dist.reduce runs only under `if distributed:`, and set_up_env (utils.py) initialises the process group exactly "
   "when env_params['distributed'] is set")
fp(AS, (106, 107, 109, 110), "DDP012", "print already master-only (other ranks return first)",
   "in distributed mode the ranks other than 0 `return` at line 103 after the reduce, so only rank 0 reaches the prints")
fp(AS, (121,), "DDP023", "model always wrapped",
   "model is DistributedDataParallel (line 67) or DataParallel (line 70) on every path, both have .module")
EC = "EfficientConformer/main.py"
fp(EC, (34,), "DDP033", "single-node spawn: the rank is the local device index",
   "the workers are torch.multiprocessing.spawn'ed on one machine (MASTER_ADDR localhost, world_size = "
   "torch.cuda.device_count()), so the spawn index is both the global rank and the local GPU index")
fp(EC, (43,), "DDP012", "per-rank line that carries its rank",
   "'Device: cuda:N' names each process's own device: a per-rank line by design")
EM = "EfficientConformer/models/model.py"
fp(EM, (434, 435), "DDP012", "per-rank output of distinct data (opt-in verbose)",
   "with --verbose_val each rank prints the ground truths and predictions of its own validation shard: different "
   "utterances on each rank, not copies of one line")
DBT = "DB/trainer.py"
MANUAL[(DBT, 170, "DDP012")] = (DBT, 68)    # tqdm validation progress bar on every rank: the judged print-every-rank problem
# A finding on a line that a judgment lists (so the matcher would count it true) but that is false.
FORCED_FP = {
}
HELDOUT = os.environ.get("HELDOUT", "/work/corpus-ddp21o/_heldout" + SUFFIX)
_ht = os.path.join(HELDOUT, "heldout_tables.py")
if os.path.exists(_ht):
    exec(open(_ht).read())   # defines split-B MANUAL/FP/FORCED_FP entries with fp(...) and MANUAL[...] = ...
else:
    print("note: no", _ht, "- split B findings stay unjudged")


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
os.makedirs(HELDOUT, exist_ok=True)
for path, rs in ((os.path.join(here, f"findings{SUFFIX}.tsv"), [r for r in rows if r["split"] == "A"]),
                 (os.path.join(HELDOUT, f"findings_all{SUFFIX}.tsv"), rows)):
    with open(path, "w") as f:
        w = csv.DictWriter(f, fieldnames=["mode", "file", "line", "code", "default", "split", "verdict", "matches",
                                          "fp_class", "reason"], delimiter="\t", lineterminator="\n")
        w.writeheader(); w.writerows(rs)
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
    len(RC), "yes" if not slow else "no", max(s for _, _, s in secs),
    (lambda f: f if S[f] == "A" else "a split-B file")(max(secs, key=lambda t: t[2])[0]),
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
# recall over the judged problems whose category some rule targets: every value of CAT, other:* included
# (added at b5cb661; the headline recall above is over all judged problems)
tcats = set(CAT.values())
out.append("\n#### Recall: all judged problems vs categories some rule targets (CAT values, other:* included)\n\n"
           "| split | judged | default found | recall | targeted judged | default found | targeted recall | ALL found (targeted) |\n"
           "|---|---|---|---|---|---|---|---|")
for split in SPLITS:
    js = [j for j in J if not split or S[j["file"]] == split]; jt = [j for j in js if j["category"] in tcats]
    k = lambda j: "%s:%s" % (j["file"], j["line"])
    fa = sum(k(j) in hd for j in js); ft = sum(k(j) in hd for j in jt); fta = sum(k(j) in ha for j in jt)
    out.append(f"| {sname(split)} | {len(js)} | {fa} | {pct(fa, len(js))} | {len(jt)} | {ft} | **{pct(ft, len(jt))}** | {fta} ({pct(fta, len(jt))}) |")
common = list(out)
def detail(out, splits):
    out.append("\n#### False positives by class (file:line rule: cause)" + ("" if splits is None else ", split A") + "\n")
    byc = collections.defaultdict(list)
    for r in rows:
        if r["verdict"] == "FALSE" and r["mode"] == "all" and (splits is None or r["split"] in splits):
            byc[r["fp_class"]].append(r)
    for cls in sorted(byc, key=lambda k: -len(byc[k])):
        rs = byc[cls]; nd = sum(r["default"] == "yes" for r in rs)
        out.append(f"- **{cls}** ({len(rs)} findings, {nd} from default rules)")
        seen = collections.OrderedDict()
        for r in rs:
            seen.setdefault((r["file"], r["code"], r["reason"]), []).append(r["line"])
        for (f, code, why), ls in seen.items():
            out.append(f"  - {f}:{','.join(map(str, ls))} {code}: {why}")
    out.append("\n#### Judged problems missed by the default rules (marked * when --select ALL finds them)"
               + ("" if splits is None else ", split A") + "\n")
    for j in J:
        k = "%s:%s" % (j["file"], j["line"])
        if k not in hd and (splits is None or S[j["file"]] in splits):
            out.append(f"- {'*' if k in ha else ''}{j['file']}:{j['line']} {j['category']} (split {S[j['file']]}"
                       f"{', added after' if j['added_after'] == 'yes' else ''}): {j['note']}")
def perfile(out, splits):
    out.append("\n#### Per file" + ("" if splits is None else ", split A") +
               "\n\n| file | split | judged | found (default) | found (ALL) | findings default (true/false) | findings ALL (true/false/unjudged) |\n|---|---|---|---|---|---|---|")
    for lf in S:
        if splits is not None and S[lf] not in splits: continue
        js = [j for j in J if j["file"] == lf]; ks = ["%s:%s" % (j["file"], j["line"]) for j in js]
        rd = [r for r in rows if r["file"] == lf and r["mode"] == "def"]; ra = [r for r in rows if r["file"] == lf and r["mode"] == "all"]
        c = lambda rs, v: sum(r["verdict"] == v for r in rs)
        out.append(f"| {lf} | {S[lf]} | {len(js)} | {sum(k in hd for k in ks)} | {sum(k in ha for k in ks)} | "
                   f"{len(rd)} ({c(rd, 'TRUE')}/{c(rd, 'FALSE')}) | {len(ra)} ({c(ra, 'TRUE')}/{c(ra, 'FALSE')}/{c(ra, 'UNJUDGED')}) |")
full = list(common); perfile(full, None); detail(full, None)
pub = list(common); perfile(pub, {"A"}); detail(pub, {"A"})
# split B (held out): aggregates only, no file names
pub.append("\n#### Split B (held out): false findings by class and rule, counts only\n")
pub.append("| mode | class | rule | findings |\n|---|---|---|---|")
cb = collections.Counter((r["mode"], r["fp_class"], r["code"]) for r in rows if r["split"] == "B" and r["verdict"] == "FALSE")
for (m, cls, code), n in sorted(cb.items()):
    pub.append(f"| {m} | {cls} | {code} | {n} |")
pub.append("\n#### Split B (held out): judged problems missed, counts per category\n")
pub.append("| category | judged | missed by default | missed by ALL |\n|---|---|---|---|")
cm = collections.defaultdict(lambda: [0, 0, 0])
for j in J:
    if S[j["file"]] != "B": continue
    k = "%s:%s" % (j["file"], j["line"]); c = cm[j["category"]]
    c[0] += 1; c[1] += k not in hd; c[2] += k not in ha
for cat in sorted(cm):
    pub.append(f"| {cat} | {cm[cat][0]} | {cm[cat][1]} | {cm[cat][2]} |")
open(os.path.join(HELDOUT, f"tables_full{SUFFIX}.md"), "w").write("\n".join(full) + "\n")
open(os.path.join(here, f"tables{SUFFIX}.md"), "w").write("\n".join(pub) + "\n")
print("\n".join(pub))
