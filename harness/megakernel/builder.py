"""A small builder for schedule documents, used by the lowering, the corpus and the tests."""

from __future__ import annotations

from harness.megakernel.format import new_document


class ScheduleBuilder:
    def __init__(self, target: dict, meta: dict | None = None):
        self.doc = new_document(target, meta)

    def buffer(self, name: str, kind: str, shape: list[int], dtype: str = "F32",
               space: str = "HBM", source: str | None = None) -> int:
        bid = len(self.doc["buffers"])
        self.doc["buffers"].append({"id": bid, "name": name, "kind": kind, "dtype": dtype,
                                    "shape": list(shape), "space": space, "source": source})
        return bid

    def counter(self, note: str = "") -> int:
        cid = len(self.doc["counters"])
        self.doc["counters"].append({"id": cid, "init": 0, "note": note})
        return cid

    def task(self, op: str, inputs: list[int], outputs: list[int], out_counter: int,
             waits: list[tuple[int, int]] = (), sm: int = 0, params: dict | None = None,
             regions: dict[int, list] | None = None, label: str = "", est_bytes: int = 0,
             est_flops: int = 0) -> int:
        tid = len(self.doc["tasks"])
        task = {"id": tid, "op": op, "inputs": list(inputs), "outputs": list(outputs),
                "out_counter": out_counter,
                "waits": [{"counter": c, "threshold": k} for c, k in waits],
                "params": dict(params or {}), "sm": sm, "label": label,
                "est_bytes": est_bytes, "est_flops": est_flops}
        if regions:
            task["regions"] = [{"buffer": b, "box": [list(pair) for pair in box]} for b, box in regions.items()]
        self.doc["tasks"].append(task)
        return tid

    def page(self, space: str, nbytes: int) -> int:
        pages = self.doc["pages"] or {"buffer_to_page": {}, "pages": []}
        self.doc["pages"] = pages
        pid = len(pages["pages"])
        pages["pages"].append({"id": pid, "space": space, "nbytes": nbytes})
        return pid

    def bind(self, buffer: int, page: int) -> None:
        self.doc["pages"]["buffer_to_page"][str(buffer)] = page
