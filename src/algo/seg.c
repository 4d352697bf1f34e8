/* seg.c - the node-segment family: the whole collective as one step that
 * the ranks of a node run together on their shared segment
 * (src/transport/seg/seg.h). The schedule records what each rank gives and
 * gets, so the simulator costs it like any other schedule. */
#include "algo.h"

pccl_status_t pccl_gen_seg(pccl_sb_t *sb, const pccl_coll_args_t *a) {
  if (a->topo && a->topo->nnodes > 1) return PCCL_ERR_UNSUPPORTED; /* one node only */
  size_t p = (size_t)a->nranks, n = a->count;
  int root = a->rank == a->root;
  size_t send = n, recv = n;
  switch (a->coll) {
  case PCCL_COLL_ALLGATHER: recv = p * n; break;
  case PCCL_COLL_REDUCE_SCATTER: send = p * n; break;
  case PCCL_COLL_ALLREDUCE: break;
  case PCCL_COLL_BROADCAST: send = root ? n : 0; break;
  case PCCL_COLL_REDUCE: recv = root ? n : 0; break;
  case PCCL_COLL_GATHER: recv = root ? p * n : 0; break;
  case PCCL_COLL_SCATTER: send = root ? p * n : 0; break;
  case PCCL_COLL_ALLTOALL: send = recv = p * n; break;
  case PCCL_COLL_SCAN: break;
  case PCCL_COLL_EXSCAN: recv = a->rank > 0 ? n : 0; break;
  case PCCL_COLL_ALLGATHERV: /* the blocks, without the gaps between them */
    send = a->boff ? a->boff[a->rank + 1] - a->boff[a->rank] : n;
    recv = a->boff ? a->boff[p] : p * n;
    break;
  case PCCL_COLL_REDUCE_SCATTERV:
    send = a->boff ? a->boff[p] : p * n;
    recv = a->boff ? a->boff[a->rank + 1] - a->boff[a->rank] : n;
    break;
  case PCCL_COLL_GATHERV: /* count: a rank's own block, except at a root with blocks */
    send = root && a->boff ? a->boff[a->rank + 1] - a->boff[a->rank] : n;
    recv = root ? (a->boff ? a->boff[p] : p * n) : 0;
    break;
  case PCCL_COLL_SCATTERV:
    recv = root && a->boff ? a->boff[a->rank + 1] - a->boff[a->rank] : n;
    send = root ? (a->boff ? a->boff[p] : p * n) : 0;
    break;
  case PCCL_COLL_ALLTOALLV: /* scounts | sdispls | rcounts | rdispls */
    send = recv = a->a2a ? 0 : p * n;
    for (size_t r = 0; a->a2a && r < p; r++) send += a->a2a[r], recv += a->a2a[2 * p + r];
    break;
  default: return PCCL_ERR_UNSUPPORTED;
  }
  pccl_sb_node(sb, a->coll, pccl_rg(PCCL_BUF_RECV, 0, recv), pccl_rg(PCCL_BUF_SEND, 0, send));
  return PCCL_OK;
}
