"""The human-readable conversion report printed on stderr."""

from __future__ import annotations

from ddpify.findings import ConversionResult


def conversion_report(result: ConversionResult, source_name: str, output_name: str) -> str:
    if not result.changed:
        return f"ddpify: {source_name}: no training code to convert, output is identical\n"
    lines = [f"ddpify: {source_name} -> {output_name}: {len(result.changes)} change(s), {len(result.manual)} item(s) for a human"]
    lines.append("changed:")
    lines += [f"  {_where(c.line)}{c.what}" for c in result.changes]
    if result.manual:
        lines.append("needs a human (not rewritten):")
        for item in result.manual:
            lines.append(f"  {_where(item.line)}{item.why}")
            lines.append(f"  {'':6}-> {item.todo}")
    script = output_name if output_name not in ("-", "<stdout>") else "train_ddp.py"
    lines += [
        "launch:",
        f"  torchrun --standalone --nproc_per_node=NUM_GPUS {script} ARGS...   # one machine",
        f"  torchrun --standalone --nproc_per_node=2 {script} ARGS...          # CPU, gloo (a test run)",
        f"  python {script} ARGS...                                          # still one process, like the original",
        f"  ddpify verify {script} -- ARGS...                                # check it: sharding, sync, saves, hangs",
    ]
    return "\n".join(lines) + "\n"


def _where(line: int) -> str:
    return f"L{line:<5}" if line else f"{'':6}"
