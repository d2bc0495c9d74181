"""KernelBench L3 48: the Mamba-2 state-space-duality (SSD) scan in its chunked form (Dao & Gu
2024): diagonal-block outputs, per-chunk states, the inter-chunk recurrence and the
state-to-output term. Returns Y. A, B and C are parameters of shape (batch, length, heads[, state]),
as in KernelBench."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 2048
seq_length = 128
n_heads = 8
d_head = 64
d_state = 16
block_len = 64


def segsum(x):
    """out[..., i, j] = x[..., j+1] + ... + x[..., i] for j <= i, and -inf above the diagonal."""
    t = x.size(-1)
    cumsum = torch.cumsum(x, dim=-1)
    out = cumsum[..., :, None] - cumsum[..., None, :]
    lower = torch.tril(torch.ones(t, t, device=x.device, dtype=torch.bool), diagonal=0)
    return out.masked_fill(~lower, -torch.inf)


class Model(nn.Module):
    def __init__(self, batch_size, seq_length, n_heads, d_head, d_state, block_len=64):
        super().__init__()
        assert seq_length % block_len == 0, "seq_length must be a multiple of block_len"
        self.batch_size = batch_size
        self.seq_length = seq_length
        self.n_heads = n_heads
        self.d_head = d_head
        self.d_state = d_state
        self.block_len = block_len
        # A is a per-step log decay, negative as in Mamba-2 (A = -exp(A_log) * dt); see FIXES.
        self.A = nn.Parameter(-torch.rand(batch_size, seq_length, n_heads))
        self.B = nn.Parameter(torch.randn(batch_size, seq_length, n_heads, d_state))
        self.C = nn.Parameter(torch.randn(batch_size, seq_length, n_heads, d_state))

    def segsum(self, x):
        return segsum(x)

    def _chunk(self, t):
        """(b, chunks * block_len, ...) -> (b, chunks, block_len, ...)."""
        return t.reshape(t.shape[0], -1, self.block_len, *t.shape[2:])

    def forward(self, X, initial_states=None):
        x_blocks, b_blocks, c_blocks = self._chunk(X), self._chunk(self.B), self._chunk(self.C)
        a_blocks = self._chunk(self.A).permute(0, 3, 1, 2)  # (b, h, chunks, l)
        a_cumsum = torch.cumsum(a_blocks, dim=-1)
        # 1. outputs within each chunk (the quadratic, attention-like form)
        decay = torch.exp(self.segsum(a_blocks))
        y_diag = torch.einsum("bclhn,bcshn,bhcls,bcshp->bclhp", c_blocks, b_blocks, decay, x_blocks)
        # 2. the state each chunk leaves behind
        decay_states = torch.exp(a_cumsum[:, :, :, -1:] - a_cumsum)
        states = torch.einsum("bclhn,bhcl,bclhp->bchpn", b_blocks, decay_states, x_blocks)
        # 3. the recurrence across chunks
        if initial_states is None:
            initial_states = torch.zeros_like(states[:, :1])
        states = torch.cat([initial_states, states], dim=1)
        decay_chunk = torch.exp(self.segsum(F.pad(a_cumsum[:, :, :, -1], (1, 0))))
        states = torch.einsum("bhzc,bchpn->bzhpn", decay_chunk, states)[:, :-1]
        # 4. the contribution of the incoming state to each chunk's outputs
        y_off = torch.einsum("bclhn,bchpn,bhcl->bclhp", c_blocks, states, torch.exp(a_cumsum))
        y = y_diag + y_off
        return y.reshape(y.shape[0], -1, *y.shape[3:])  # (b, length, h, p)


def get_inputs():
    return [torch.randn(batch_size, seq_length, n_heads, d_head)]


def get_init_inputs():
    return [batch_size, seq_length, n_heads, d_head, d_state, block_len]


SMALL = {"batch_size": 2, "seq_length": 32, "n_heads": 2, "d_head": 8, "d_state": 4,
         "block_len": 16}
FIXES = {
    "input_distribution": "torch.randn inputs instead of torch.rand: signed inputs with spread",
    "other": "A is drawn from -U(0, 1) (a decay, as in Mamba-2) instead of randn: with randn the "
             "cumulative sums grow and exp(segsum(A)) pushed outputs to ~1e13 at full size, which "
             "overflows fp16; the operators and shapes are unchanged",
}
EXCLUDE = None
