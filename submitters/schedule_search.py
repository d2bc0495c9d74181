"""``schedule-search``: megakernel schedules for a Llama config, searched and checked on the reference VM.

The search lives with the rest of the schedule machinery (harness/megakernel/search.py); this file
makes it a generator of the megakernel suite.
"""

from __future__ import annotations

from harness.megakernel.search import ScheduleSearch
from harness.registry import register


@register("generator", "schedule-search")
class ScheduleSearchGenerator(ScheduleSearch):
    suites = ("megakernel",)
