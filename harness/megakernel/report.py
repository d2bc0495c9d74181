"""Figures from labelled rows: the confusion matrix, the per-class table, the disagreements.

Positive = unsafe. A false accept is a schedule the validator accepts and the oracle faults; a
false reject is one it rejects that the oracle calls safe.
"""

from __future__ import annotations


def confusion(rows: list[dict]) -> dict:
    counts = {"true_reject": 0, "true_accept": 0, "false_reject": 0, "false_accept": 0}
    for row in rows:
        if row["safe"]:
            counts["true_accept" if row["accepted"] else "false_reject"] += 1
        else:
            counts["false_accept" if row["accepted"] else "true_reject"] += 1
    counts.update(tp=counts["true_reject"], tn=counts["true_accept"], fp=counts["false_reject"],
                  fn=counts["false_accept"], n=len(rows))
    return counts


def by_mode(rows: list[dict]) -> dict:
    """Confusion over all rows and over each oracle mode (exhaustive, sampled, structural)."""
    result = {"all": confusion(rows)}
    for mode in ("exhaustive", "sampled", "structural"):
        result[mode] = confusion([r for r in rows if r["mode"] == mode])
    return result


def per_class(rows: list[dict]) -> list[dict]:
    classes: dict[str, list[dict]] = {}
    for row in rows:
        classes.setdefault(row["cls"], []).append(row)
    table = []
    for cls in sorted(classes):
        group = classes[cls]
        c = confusion(group)
        table.append({"class": cls, "n": len(group), "oracle_unsafe": sum(not r["safe"] for r in group),
                      "oracle_safe": sum(r["safe"] for r in group),
                      "exhaustive": sum(r["mode"] == "exhaustive" for r in group),
                      "sampled": sum(r["mode"] == "sampled" for r in group),
                      "structural": sum(r["mode"] == "structural" for r in group),
                      "rejected": sum(not r["accepted"] for r in group),
                      **{k: c[k] for k in ("true_reject", "true_accept", "false_reject", "false_accept")},
                      "validator_classes": _top_classes(group)})
    return table


def _top_classes(group: list[dict]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for row in group:
        for cls in row["classes"]:
            counts[cls] = counts.get(cls, 0) + 1
    return dict(sorted(counts.items(), key=lambda kv: -kv[1])[:6])


def disagreements(rows: list[dict]) -> list[dict]:
    return [{k: r.get(k) for k in ("id", "cls", "mode", "tasks", "accepted", "safe", "classes", "kinds",
                                    "explanation", "first_violation")}
            for r in rows if r["accepted"] != r["safe"]]


def family_agreement(rows: list[dict]) -> dict:
    """On true rejects: does the validator's first reason family match the oracle's finding?"""
    match = total = 0
    for row in rows:
        if row["safe"] or row["accepted"]:
            continue
        total += 1
        oracle_family = ("structural" if row["mode"] == "structural"
                         else "deadlock" if "deadlock" in row["kinds"] else "race")
        match += oracle_family == row["family"]
    return {"true_rejects": total, "same_family": match}


def table_text(table: list[dict]) -> str:
    head = f"{'class':28s} {'n':>6s} {'unsafe':>7s} {'safe':>6s} {'exh':>6s} {'samp':>5s} {'TR':>6s} {'TA':>6s} {'FR':>4s} {'FA':>4s}"
    lines = [head]
    for r in table:
        lines.append(f"{r['class']:28s} {r['n']:6d} {r['oracle_unsafe']:7d} {r['oracle_safe']:6d} "
                     f"{r['exhaustive']:6d} {r['sampled']:5d} {r['true_reject']:6d} {r['true_accept']:6d} "
                     f"{r['false_reject']:4d} {r['false_accept']:4d}")
    return "\n".join(lines)
