"""PyTorch on pccl: data-parallel training in the style Horovod users know,
and a sharded (ZeRO-3 / FSDP-style) model.

    import pccl, pccl.torch as pt
    pccl.init()
    pt.broadcast_parameters(model.state_dict(), root_rank=0)
    opt = pt.DistributedOptimizer(torch.optim.SGD(model.parameters(), lr=0.1),
                                  named_parameters=model.named_parameters())
    loss.backward(); opt.step()      # gradients averaged over the ranks

DistributedOptimizer submits each gradient's all-reduce from a hook the
moment autograd has accumulated it, so communication overlaps the rest of
the backward pass; step() waits for them. ShardedModel keeps 1/size of each
layer's parameters per rank, all-gathers a layer's parameters for its
forward and again for its backward, and reduce-scatters the gradients.
Tensors must be CPU tensors (pccl's Python engine takes CPU memory).
"""
import torch

import pccl
from pccl import _torch_pg

_torch_pg.register()

__all__ = ["DistributedOptimizer", "broadcast_parameters", "broadcast_optimizer_state",
           "ShardedModel"]


class DistributedOptimizer:
    """Wraps `optimizer`: gradients are averaged (op) over the ranks before
    each step. named_parameters gives the names the all-reduces carry (they
    must be the same on every rank); without it, parameters are numbered in
    the optimizer's order. num_groups > 0 splits the parameters (in that
    order) into that many groups, each all-reduced as one grouped request
    once all its gradients are ready. Other attributes (param_groups,
    state_dict, ...) are the wrapped optimizer's."""

    def __init__(self, optimizer, named_parameters=None, num_groups=0, op=pccl.Average):
        self.optimizer = optimizer
        self.op = op
        params = [p for g in optimizer.param_groups for p in g["params"]]
        if named_parameters is not None:
            named = list(named_parameters)
            names = {}
            for n, p in named:
                if n in names.values():
                    raise ValueError("DistributedOptimizer: parameter name %r appears twice" % n)
                names[id(p)] = n
            missing = [i for i, p in enumerate(params) if id(p) not in names]
            if missing:
                raise ValueError("DistributedOptimizer: %d of the optimizer's parameters are not in "
                                 "named_parameters" % len(missing))
        else:
            names = {id(p): "param.%d" % i for i, p in enumerate(params)}
        self._params = [p for p in params if p.requires_grad]
        self._name = {id(p): "grad." + names[id(p)] for p in self._params}
        self._handles = {}
        self._group_of = {}
        self._groups = []
        if num_groups > 0:
            k = min(int(num_groups), len(self._params))
            for g in range(k):
                members = self._params[len(self._params) * g // k:len(self._params) * (g + 1) // k]
                self._groups.append(members)
                for p in members:
                    self._group_of[id(p)] = g
        self._ready = [set() for _ in self._groups]
        self._accumulators = []  # autograd keeps only weak links to hooks' owners
        for p in self._params:
            acc = p.expand_as(p).grad_fn.next_functions[0][0]
            acc.register_hook(self._hook(p))
            self._accumulators.append(acc)

    def __getattr__(self, name):
        return getattr(self.optimizer, name)

    def _hook(self, p):
        def hook(*_):
            self._submit(p)
        return hook

    def _submit(self, p):
        if p.grad is None:
            p.grad = torch.zeros_like(p)
        g = self._group_of.get(id(p))
        if g is None:
            if id(p) not in self._handles:
                self._handles[id(p)] = pccl.allreduce_async_(p.grad, name=self._name[id(p)], op=self.op)
            return
        self._ready[g].add(id(p))
        members = self._groups[g]
        if len(self._ready[g]) == len(members) and ("group", g) not in self._handles:
            self._handles[("group", g)] = pccl.grouped_allreduce_async_(
                [m.grad for m in members], name="grad.group.%d" % g, op=self.op)

    def synchronize(self):
        """Waits for every gradient's all-reduce; a parameter whose gradient
        never arrived this step (unused in the graph) is all-reduced now with
        zeros, as on the ranks that did use it."""
        for p in self._params:
            g = self._group_of.get(id(p))
            if (g is None and id(p) not in self._handles) or (g is not None and id(p) not in self._ready[g]):
                self._submit(p)
        for h in self._handles.values():
            h.wait()
        self._handles.clear()
        self._ready = [set() for _ in self._groups]

    def step(self, closure=None):
        self.synchronize()
        return self.optimizer.step(closure)

    def zero_grad(self, *args, **kwargs):
        if self._handles:
            raise RuntimeError("zero_grad() while gradients are being all-reduced: call step() or "
                               "synchronize() first")
        return self.optimizer.zero_grad(*args, **kwargs)


def broadcast_parameters(params, root_rank=0):
    """Copies root_rank's tensors into every rank's, in place. params is a
    state_dict or an iterable of (name, tensor), e.g. named_parameters()."""
    items = sorted(params.items()) if isinstance(params, dict) else list(params)
    handles = [pccl.broadcast_async_(t.data, root_rank, name="bcast.param." + n)
               for n, t in items if torch.is_tensor(t)]
    for h in handles:
        h.wait()


def broadcast_optimizer_state(optimizer, root_rank=0):
    """Makes every rank's optimizer state and hyperparameters root_rank's.
    Every rank must have the same state layout (e.g. all fresh, or all after
    the same number of steps)."""
    state = optimizer.state_dict()
    scalars = []  # (container, key) of every plain number, in one order
    for i, group in enumerate(state["param_groups"]):
        for k in sorted(group):
            if isinstance(group[k], (int, float)) and not isinstance(group[k], bool):
                scalars.append((group, k))
    handles = []
    for pid in sorted(state["state"]):
        for k in sorted(state["state"][pid]):
            v = state["state"][pid][k]
            if torch.is_tensor(v):
                handles.append(pccl.broadcast_async_(v, root_rank, name="bcast.opt.%s.%s" % (pid, k)))
            elif isinstance(v, (int, float)) and not isinstance(v, bool):
                scalars.append((state["state"][pid], k))
    if scalars:
        values = torch.tensor([float(c[k]) for c, k in scalars], dtype=torch.float64)
        pccl.broadcast_(values, root_rank, name="bcast.opt.scalars")
        for (c, k), v in zip(scalars, values.tolist()):
            c[k] = type(c[k])(v)
    for h in handles:
        h.wait()
    optimizer.load_state_dict(state)


class _ShardedLayer(torch.autograd.Function):
    """y = layer(x) with the layer's parameters held as this rank's shard:
    all-gathered for the forward, gathered again for the backward (nothing
    full-size is kept in between), gradients reduce-scattered to shards."""

    @staticmethod
    def forward(ctx, x, shard, owner):
        with torch.no_grad():
            y = owner.apply(owner.gather(shard, "fwd"), x)
        ctx.owner = owner
        ctx.save_for_backward(x, shard)
        return y

    @staticmethod
    def backward(ctx, grad_y):
        x, shard = ctx.saved_tensors
        owner = ctx.owner
        full = owner.gather(shard, "bwd").requires_grad_()
        xd = x.detach().requires_grad_(x.requires_grad)
        with torch.enable_grad():
            y = owner.apply(full, xd)
            inputs = (full, xd) if x.requires_grad else (full,)
            grads = torch.autograd.grad(y, inputs, grad_y)
        grad_x = grads[1] if x.requires_grad else None
        return grad_x, owner.scatter(grads[0]), None


class _Shard:
    """One layer's parameters flattened, padded to a multiple of the ranks,
    and this rank's slice of them."""

    def __init__(self, index, layer, size, rank):
        self.index, self.layer = index, layer
        self.names = [n for n, _ in layer.named_parameters()]
        self.shapes = [p.shape for _, p in layer.named_parameters()]
        self.numels = [p.numel() for _, p in layer.named_parameters()]
        self.numel = sum(self.numels)
        self.per_rank = -(-self.numel // size)
        dtypes = {p.dtype for p in layer.parameters()}
        if len(dtypes) > 1:
            raise ValueError("ShardedModel: layer %d mixes parameter dtypes %s" % (index, sorted(map(str, dtypes))))
        flat = torch.zeros(self.per_rank * size, dtype=dtypes.pop() if dtypes else torch.float32)
        if self.numel:
            flat[:self.numel] = torch.cat([p.detach().reshape(-1) for p in layer.parameters()])
        pccl.broadcast_(flat, 0, name="shard.%d.init" % index)  # every rank starts from rank 0's
        self.shard = torch.nn.Parameter(flat[rank * self.per_rank:(rank + 1) * self.per_rank].clone())
        for _, p in layer.named_parameters():  # the layer keeps only placeholders
            p.data = torch.empty(0)

    def gather(self, shard, phase):
        return pccl.allgather(shard.detach(), name="shard.%d.%s" % (self.index, phase))

    def scatter(self, grad_full):
        return pccl.reduce_scatter(grad_full.contiguous(), name="shard.%d.grad" % self.index,
                                   op=pccl.Average)

    def params(self, full):
        out, at = {}, 0
        for n, shape, k in zip(self.names, self.shapes, self.numels):
            out[n] = full[at:at + k].view(shape)
            at += k
        return out

    def apply(self, full, x):
        return torch.nn.utils.stateless.functional_call(self.layer, self.params(full), (x,))


class ShardedModel(torch.nn.Module):
    """A sequence of layers whose parameters are sharded over the ranks:
    each rank holds one 1/size slice of every layer (in the layer's dtype). Rank 0's
    initial parameters are everyone's. Each rank feeds its own batch; the
    gradients that reach the shards are averaged over the ranks, as in
    data-parallel training, so any optimizer over parameters() trains the
    same model that unsharded data-parallel training would."""

    def __init__(self, layers):
        super().__init__()
        self._layers = list(layers)
        p, me = pccl.size(), pccl.rank()
        self._shards = [_Shard(i, layer, p, me) for i, layer in enumerate(self._layers)]
        # the layers are not submodules: their parameters are placeholders now,
        # and parameters() must yield only the shards
        self.shards = torch.nn.ParameterList([s.shard for s in self._shards])

    def train(self, mode=True):
        super().train(mode)
        for layer in self._layers:
            layer.train(mode)
        return self

    def forward(self, x):
        for s in self._shards:
            x = _ShardedLayer.apply(x, s.shard, s) if s.numel else s.layer(x)
        return x

    def full_state(self):
        """Every layer's full parameters (all-gathered), by 'index.name'."""
        out = {}
        for s in self._shards:
            if not s.numel:
                continue
            full = s.gather(s.shard, "state")[:s.numel]
            for n, t in s.params(full).items():
                out["%d.%s" % (s.index, n)] = t.clone()
        return out
