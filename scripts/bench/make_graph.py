"""Random graph inputs for scripts/pyramid-graph-memory.sh: N nodes uniform in [0, 1000)^3
(nodes.csv: x,y,z) and an edge list (edges.csv: source,target) joining each node to the K
nodes after it in an order: `local` orders the nodes by their 100^3 chunk (edges stay in
their chunk), `crossing` by x alone (most edges cross chunks)."""
import sys

import numpy as np

n, k, kind, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
rng = np.random.default_rng(1)
p = rng.uniform(0, 1000, (n, 3)).astype(np.float32)
if kind == "local":
    c = (p // 100).astype(np.int64)
    order = np.argsort(c[:, 0] * 100 + c[:, 1] * 10 + c[:, 2], kind="stable")
elif kind == "crossing":
    order = np.argsort(p[:, 0], kind="stable")
else:
    raise SystemExit(f"unknown kind {kind}")
edges = np.concatenate([np.stack([order[:-j], order[j:]], 1) for j in range(1, k + 1)])
with open(f"{out}/nodes.csv", "w") as f:
    f.write("x,y,z\n")
    np.savetxt(f, p, fmt="%.3f", delimiter=",")
with open(f"{out}/edges.csv", "w") as f:
    f.write("source,target\n")
    np.savetxt(f, edges, fmt="%d", delimiter=",")
print(f"{n} nodes, {len(edges)} edges ({kind})")
