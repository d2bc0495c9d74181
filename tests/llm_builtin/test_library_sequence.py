"""The recurrent and transformer templates (LSTM, GRU, RNN, MultiheadAttention, TransformerEncoder)
compute what PyTorch computes, through the writer, in Triton's CPU interpreter, at odd sizes."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.filterwarnings("ignore:divide by zero encountered:RuntimeWarning",
                                        "ignore:invalid value encountered:RuntimeWarning",
                                        "ignore:overflow encountered:RuntimeWarning",
                                        "ignore:enable_nested_tensor:UserWarning")

HEADER = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n"


def problem(construct: str, forward: str, inputs: str, args: str = "x") -> str:
    return (HEADER + "class Model(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            f"        self.op = {construct}\n\n    def forward(self, {args}):\n        return {forward}\n\n\n"
            f"def get_inputs():\n    return {inputs}\n\n\ndef get_init_inputs():\n    return []\n")


RECURRENT = {
    "lstm_two_layers_batch_first_states": problem(
        "nn.LSTM(5, 7, 2, batch_first=True)", "self.op(x, (h, c))[0][:, -1, :] * 2",
        "[torch.randn(3, 4, 5), torch.randn(2, 3, 7), torch.randn(2, 3, 7)]", "x, h, c"),
    "lstm_bidirectional_cell_state": problem(
        "nn.LSTM(6, 5, 1, bidirectional=True)", "self.op(x)[1][1]", "[torch.randn(4, 3, 6)]"),
    "gru_bidirectional_two_layers_hidden": problem(
        "nn.GRU(4, 9, 2, bidirectional=True)", "self.op(x, h)[1]", "[torch.randn(5, 2, 4), torch.randn(4, 2, 9)]",
        "x, h"),
    "gru_output_no_bias": problem("nn.GRU(3, 6, bias=False)", "self.op(x)[0]", "[torch.randn(4, 3, 3)]"),
    "rnn_relu": problem("nn.RNN(5, 6, nonlinearity='relu', batch_first=True)", "self.op(x)[0]",
                        "[torch.randn(2, 5, 5)]"),
}


@pytest.mark.parametrize("case", sorted(RECURRENT))
def test_recurrent_layer_matches_pytorch(run_builtin, case):
    outcome = run_builtin(RECURRENT[case])
    assert "_tk_rnn_module(self.op" in outcome.source
    assert outcome.close, f"{case}: max error {outcome.max_error}"


def test_multihead_attention_output_matches_pytorch(run_builtin):
    reference = problem("nn.MultiheadAttention(12, 3)", "self.op(x, x, x)[0]", "[torch.randn(7, 2, 12)]")
    outcome = run_builtin(reference)
    assert "_tk_mha_module(self.op" in outcome.source
    assert outcome.close, outcome.max_error


def test_multihead_attention_whose_weights_are_used_stays_in_pytorch(run_builtin):
    from submitters.builtin.ir import NoRule
    from submitters.builtin.writer import write

    with pytest.raises(NoRule, match="stays in PyTorch"):
        write(problem("nn.MultiheadAttention(12, 3)", "self.op(x, x, x)[1]", "[torch.randn(7, 2, 12)]"))


@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_transformer_encoder_matches_pytorch(run_builtin, activation):
    construct = (f"nn.TransformerEncoder(nn.TransformerEncoderLayer(12, 3, 20, dropout=0.0, activation='{activation}',"
                 " batch_first=True), 2, norm=nn.LayerNorm(12))")
    outcome = run_builtin(problem(construct, "self.op(x)", "[torch.randn(2, 5, 12)]"))
    assert "_tk_encoder_module(self.op" in outcome.source
    assert outcome.close, outcome.max_error
