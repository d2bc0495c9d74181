"""Judging one candidate: the judge and its worker processes, correctness checks, the timer
(alternation with the baselines), speed of light, and the evaluation that ties them together."""
