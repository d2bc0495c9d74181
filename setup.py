"""The optional native fast path of the megakernel validator (harness/megakernel/_mkfast.c).

``optional=True``: without a C compiler or Python headers the install goes on and the validator
runs in pure Python (harness/megakernel/fastpath.py), with the same verdicts.
"""

from setuptools import Extension, setup

setup(ext_modules=[Extension("harness.megakernel._mkfast", ["harness/megakernel/_mkfast.c"],
                             depends=["harness/megakernel/_mkfast_accept.h", "harness/megakernel/_mkfast_read.h",
                                      "harness/megakernel/_mkfast_placed.h"], optional=True,
                             extra_compile_args=["-O2"])])
