"""The worker reads one byte of every 2 MiB page of a timed call's inputs after the L2 flush
(handlers.page_touch_views): every page of every input's memory, each storage once, nothing else."""

from __future__ import annotations

import torch

from harness.worker import handlers

PAGE = handlers.PAGE_BYTES


def _pages(nbytes: int) -> int:
    return -(-nbytes // PAGE)


def test_every_page_of_each_input_is_read_once_whatever_its_layout():
    big = torch.arange((5 << 20) // 4, dtype=torch.float32)          # 5 MiB: pages at 0, 2 and 4 MiB
    transposed = torch.randn(1024, 700).t()                              # not contiguous: its storage is read
    bytes_ = torch.arange(3 * PAGE + 7, dtype=torch.int64).to(torch.uint8)
    views = handlers.page_touch_views([big, 3, transposed, None, bytes_])
    assert [v.numel() for v in views] == [_pages(big.untyped_storage().nbytes()),
                                          _pages(transposed.untyped_storage().nbytes()),
                                          _pages(bytes_.untyped_storage().nbytes())] == [3, 2, 4]
    for view, tensor in zip(views, [big, transposed, bytes_]):
        assert view.dtype == torch.uint8 and view.stride() == (PAGE,)
        assert view.data_ptr() == tensor.untyped_storage().data_ptr()   # starts at the storage's first byte
    # the bytes read are the storage's bytes at each page's start
    assert views[2].tolist() == bytes_[::PAGE].tolist() == [0, 0, 0, 0]
    expected = big.view(torch.uint8)[::PAGE]
    assert torch.equal(views[0], expected)


def test_a_storage_shared_by_two_inputs_is_read_once_and_views_of_a_slice_cover_its_whole_storage():
    base = torch.randn((4 << 20) // 4)                                   # 4 MiB: two pages
    first, second = base[:10], base[100:]
    views = handlers.page_touch_views([first, second])
    assert len(views) == 1 and views[0].numel() == _pages(base.untyped_storage().nbytes()) == 2


def test_empty_inputs_and_non_tensors_are_skipped():
    assert handlers.page_touch_views([torch.empty(0), 1.5, "x", (torch.ones(2),)]) == []


def test_a_tensor_subclass_is_not_read():
    class Marked(torch.Tensor):
        pass

    marked = torch.ones(4).as_subclass(Marked)
    assert handlers.page_touch_views([marked]) == []
