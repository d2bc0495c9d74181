"""KernelBench L3 47: NetVLAD pooling (Arandjelovic et al. 2016) without ghost clusters (the
ghost-cluster code path with zero ghosts): soft-assign features to clusters, aggregate residuals
to the cluster centres, intra-normalise per cluster, then L2-normalise the flattened descriptor."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 2048
num_features = 100
num_clusters = 32
feature_size = 512
ghost_clusters = 0


class Model(nn.Module):
    def __init__(self, cluster_size, feature_size, ghost_clusters):
        super().__init__()
        self.feature_size = feature_size
        self.cluster_size = cluster_size
        self.ghost_clusters = ghost_clusters
        init_scale = 1 / math.sqrt(feature_size)
        clusters = cluster_size + ghost_clusters
        # Assignment weights (the paper's w; the bias is the BatchNorm's) and the centres c_k.
        self.clusters = nn.Parameter(init_scale * torch.randn(feature_size, clusters))
        self.batch_norm = nn.BatchNorm1d(clusters)
        self.clusters2 = nn.Parameter(init_scale * torch.randn(1, feature_size, cluster_size))
        self.out_dim = cluster_size * feature_size

    def forward(self, x):
        """x: (B, N, D) -> (B, D * K)."""
        n = x.size(1)
        x = x.view(-1, self.feature_size)                          # (B*N, D)
        assignment = self.batch_norm(torch.matmul(x, self.clusters))
        assignment = F.softmax(assignment, dim=1)[:, :self.cluster_size]  # drop ghost clusters
        assignment = assignment.view(-1, n, self.cluster_size)     # (B, N, K)
        a = torch.sum(assignment, dim=1, keepdim=True) * self.clusters2  # (B, D, K)
        x = x.view(-1, n, self.feature_size)
        vlad = torch.matmul(assignment.transpose(1, 2), x).transpose(1, 2) - a  # (B, D, K)
        vlad = F.normalize(vlad)                                   # intra-normalisation over D
        vlad = vlad.reshape(-1, self.cluster_size * self.feature_size)
        return F.normalize(vlad)


def get_inputs():
    return [torch.randn(batch_size, num_features, feature_size)]


def get_init_inputs():
    return [num_clusters, feature_size, ghost_clusters]


SMALL = {"batch_size": 8, "num_features": 16, "num_clusters": 8, "feature_size": 32,
         "ghost_clusters": 0}
FIXES = {
    "input_distribution": "torch.randn inputs instead of torch.rand: signed inputs with spread",
}
EXCLUDE = None
