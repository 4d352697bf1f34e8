! test_fortran.f90 - a plain Fortran MPI program (mpif.h) calling the
! collectives that libpccl_mpi.so intercepts, MPI_IN_PLACE included, and
! their non-blocking forms, completed by each of MPI's completion calls and
! moved on inside a blocking receive, each checked against a reference
! computed here. Prints the checks, failures and a digest of the results for
! run_dropin.sh to compare with and without the preload.
program test_fortran
  implicit none
  include 'mpif.h'
  integer, parameter :: n = 1000, np = 1048576
  integer :: ierr, rank, nranks, i, r, root, checks, failures, total
  integer, allocatable :: a(:), b(:), w(:), big(:), bigw(:), counts(:), displs(:)
  double precision, allocatable :: x(:), xw(:)
  integer(kind=8) :: digest
  integer :: req, reqs(5), idx, outcount, indices(5), k, done
  integer :: st(MPI_STATUS_SIZE), sts(MPI_STATUS_SIZE, 5)
  integer, allocatable :: c(:), cw(:), d(:), dw(:), e(:), rcounts(:), p(:), pw(:), q(:)
  logical :: flag
  character(len=MPI_MAX_LIBRARY_VERSION_STRING) :: library
  integer :: library_len, no_index

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  allocate(a(n), b(n), w(n), big(n * nranks), bigw(n * nranks), x(n), xw(n), counts(nranks), &
           displs(nranks), c(n * nranks), cw(n * nranks), d(n * nranks), dw(n * nranks), &
           e(n * nranks), rcounts(nranks))
  checks = 0
  failures = 0
  digest = 0
  root = nranks - 1

  ! all-reduce, sum of integers: into another array, then in place
  call values(a, w, n, nranks - 1)
  call MPI_Allreduce(a, b, n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call expect_int(b, w, n, 'allreduce')
  b = a
  call MPI_Allreduce(MPI_IN_PLACE, b, n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call expect_int(b, w, n, 'allreduce in place')

  ! all-reduce, max of doubles, in place
  do i = 1, n
    x(i) = dble(mod(rank * 13 + i * 7, 11) - 5)
    xw(i) = -100d0
    do r = 0, nranks - 1
      xw(i) = max(xw(i), dble(mod(r * 13 + i * 7, 11) - 5))
    end do
  end do
  call MPI_Allreduce(MPI_IN_PLACE, x, n, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD, ierr)
  call expect_int(int(x), int(xw), n, 'allreduce max double precision')

  ! reduce in place at the root, of n/2 elements: MPICH 4.0's own in-place
  ! reduce at a root other than 0 crashes above 2 KB
  b = a
  if (rank == root) then
    call MPI_Reduce(MPI_IN_PLACE, b, n / 2, MPI_INTEGER, MPI_SUM, root, MPI_COMM_WORLD, ierr)
    call expect_int(b, w, n / 2, 'reduce in place')
  else
    call MPI_Reduce(b, b, n / 2, MPI_INTEGER, MPI_SUM, root, MPI_COMM_WORLD, ierr)
  end if

  ! reduce-scatter-block in place: the rank's block lands at the start
  call values(big, bigw, n * nranks, nranks - 1)
  call MPI_Reduce_scatter_block(MPI_IN_PLACE, big, n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call expect_int(big(1:n), bigw(rank * n + 1:(rank + 1) * n), n, 'reduce_scatter_block in place')

  ! all-gather in place
  do i = 1, n * nranks
    bigw(i) = ((i - 1) / n) * 100000 + i
  end do
  big = -1
  big(rank * n + 1:(rank + 1) * n) = bigw(rank * n + 1:(rank + 1) * n)
  call MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, big, n, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  call expect_int(big, bigw, n * nranks, 'allgather in place')

  ! broadcast from the last rank
  b = -1
  if (rank == root) b = w
  call MPI_Bcast(b, n, MPI_INTEGER, root, MPI_COMM_WORLD, ierr)
  call expect_int(b, w, n, 'bcast')

  ! scatter, then gather in place at the root
  b = -1
  call MPI_Scatter(bigw, n, MPI_INTEGER, b, n, MPI_INTEGER, root, MPI_COMM_WORLD, ierr)
  call expect_int(b, bigw(rank * n + 1:(rank + 1) * n), n, 'scatter')
  if (rank == root) then
    big = -1
    big(rank * n + 1:(rank + 1) * n) = b
    call MPI_Gather(MPI_IN_PLACE, n, MPI_INTEGER, big, n, MPI_INTEGER, root, MPI_COMM_WORLD, ierr)
    call expect_int(big, bigw, n * nranks, 'gather in place')
  else
    call MPI_Gather(b, n, MPI_INTEGER, big, n, MPI_INTEGER, root, MPI_COMM_WORLD, ierr)
  end if

  ! all-to-all: block j of rank r carries r * 1000 + j
  total = n / 10
  do r = 0, nranks - 1
    big(r * total + 1:(r + 1) * total) = rank * 1000 + r
    bigw(r * total + 1:(r + 1) * total) = r * 1000 + rank
  end do
  call MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, big, total, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  call expect_int(big(1:total * nranks), bigw(1:total * nranks), total * nranks, 'alltoall in place')

  ! scan and exscan of the first all-reduce's integers: the prefix up to
  ! and below the rank
  call values(a, w, n, rank)
  call MPI_Scan(a, b, n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call expect_int(b, w, n, 'scan')
  w = w - a
  b = a
  call MPI_Exscan(MPI_IN_PLACE, b, n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank > 0) call expect_int(b, w, n, 'exscan in place')

  ! all-gatherv: rank r gives r + 1 integers, placed in reverse rank order
  call vblocks()
  big = -1
  call MPI_Allgatherv(a, rank + 1, MPI_INTEGER, big, counts, displs, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  call expect_int(big(1:total), bigw(1:total), total, 'allgatherv')

  ! gatherv of the same blocks to the root, in place there; then scatterv
  ! of them back, in place at the root
  big = -1
  if (rank == root) then
    big(displs(rank + 1) + 1:displs(rank + 1) + rank + 1) = a(1:rank + 1)
    call MPI_Gatherv(MPI_IN_PLACE, rank + 1, MPI_INTEGER, big, counts, displs, MPI_INTEGER, root, &
                     MPI_COMM_WORLD, ierr)
    call expect_int(big(1:total), bigw(1:total), total, 'gatherv in place')
  else
    call MPI_Gatherv(a, rank + 1, MPI_INTEGER, big, counts, displs, MPI_INTEGER, root, &
                     MPI_COMM_WORLD, ierr)
  end if
  b = -1
  if (rank == root) then
    call MPI_Scatterv(bigw, counts, displs, MPI_INTEGER, MPI_IN_PLACE, rank + 1, MPI_INTEGER, root, &
                      MPI_COMM_WORLD, ierr)
    call expect_int(bigw(1:total), big(1:total), total, 'scatterv in place')
  else
    call MPI_Scatterv(bigw, counts, displs, MPI_INTEGER, b, rank + 1, MPI_INTEGER, root, &
                      MPI_COMM_WORLD, ierr)
    call expect_int(b, a, rank + 1, 'scatterv')
  end if

  ! all-to-allv, in place: rank i and rank j swap i + j + 1 integers, placed
  ! in reverse rank order; block i of rank j carries i * 1000 + j
  total = 0
  do r = nranks - 1, 0, -1
    counts(r + 1) = rank + r + 1
    displs(r + 1) = total
    total = total + rank + r + 1
  end do
  do r = 0, nranks - 1
    big(displs(r + 1) + 1:displs(r + 1) + counts(r + 1)) = rank * 1000 + r
    bigw(displs(r + 1) + 1:displs(r + 1) + counts(r + 1)) = r * 1000 + rank
  end do
  call MPI_Alltoallv(MPI_IN_PLACE, counts, displs, MPI_DATATYPE_NULL, big, counts, displs, &
                     MPI_INTEGER, MPI_COMM_WORLD, ierr)
  call expect_int(big(1:total), bigw(1:total), total, 'alltoallv in place')

  ! a barrier: the call's return code (test_faults and test_dropin check
  ! that ranks wait)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  checks = checks + 1
  if (ierr /= MPI_SUCCESS) then
    failures = failures + 1
    print '(a,i0,a)', 'rank ', rank, ': FAIL barrier'
  end if

  ! ---- the non-blocking forms ----

  ! all-reduce, completed by MPI_Wait, which nulls the request
  call values(a, w, n, nranks - 1)
  b = -1
  call MPI_Iallreduce(a, b, n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, req, ierr)
  call MPI_Wait(req, st, ierr)
  call expect_int(b, w, n, 'iallreduce + wait')
  call expect_true(req == MPI_REQUEST_NULL, 'wait nulls the request')

  ! broadcast from the last rank, completed by MPI_Test in a loop
  b = -1
  if (rank == root) b = w
  call MPI_Ibcast(b, n, MPI_INTEGER, root, MPI_COMM_WORLD, req, ierr)
  flag = .false.
  do while (.not. flag)
    call MPI_Test(req, flag, MPI_STATUS_IGNORE, ierr)
  end do
  call expect_int(b, w, n, 'ibcast + test')

  ! all-gather and reduce-scatter-block in place, both outstanding: MPI_Waitall
  do i = 1, n * nranks
    bigw(i) = ((i - 1) / n) * 100000 + i
  end do
  call values(c, cw, n * nranks, nranks - 1)
  big = -1
  big(rank * n + 1:(rank + 1) * n) = bigw(rank * n + 1:(rank + 1) * n)
  call MPI_Iallgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, big, n, MPI_INTEGER, MPI_COMM_WORLD, &
                      reqs(1), ierr)
  call MPI_Ireduce_scatter_block(MPI_IN_PLACE, c, n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, &
                                 reqs(2), ierr)
  call MPI_Waitall(2, reqs, sts, ierr)
  call expect_int(big, bigw, n * nranks, 'iallgather in place + waitall')
  call expect_int(c(1:n), cw(rank * n + 1:(rank + 1) * n), n, 'ireduce_scatter_block + waitall')

  ! scan and exscan, completed by MPI_Testall in a loop
  call values(a, w, n, rank)
  call MPI_Iscan(a, b, n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, reqs(1), ierr)
  c(1:n) = -1
  call MPI_Iexscan(a, c, n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, reqs(2), ierr)
  flag = .false.
  do while (.not. flag)
    call MPI_Testall(2, reqs, flag, MPI_STATUSES_IGNORE, ierr)
  end do
  call expect_int(b, w, n, 'iscan + testall')
  if (rank > 0) call expect_int(c(1:n), w - a, n, 'iexscan + testall')

  ! reduce to the last rank and a barrier, completed one at a time by
  ! MPI_Waitany: each index once, then MPI_UNDEFINED (MPICH 4.0's Fortran
  ! MPI_WAITANY adds 1 to that too, as it does to an index: seen here)
  call MPI_Get_library_version(library, library_len, ierr)
  no_index = MPI_UNDEFINED
  if (index(library(1:library_len), 'MPICH') > 0) no_index = MPI_UNDEFINED + 1
  call values(a, w, n, nranks - 1)
  b = -1
  call MPI_Ireduce(a, b, n, MPI_INTEGER, MPI_SUM, root, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_Ibarrier(MPI_COMM_WORLD, reqs(2), ierr)
  done = 0
  do k = 1, 2
    call MPI_Waitany(2, reqs, idx, st, ierr)
    if (idx >= 1 .and. idx <= 2) done = done + idx
  end do
  call expect_true(done == 3, 'waitany gives each index once')
  call MPI_Waitany(2, reqs, idx, st, ierr)
  call expect_true(idx == no_index, 'waitany on null requests')
  if (rank == root) call expect_int(b, w, n, 'ireduce + waitany')

  ! scatter, then gather back, each completed by MPI_Testany in a loop
  b = -1
  call MPI_Iscatter(bigw, n, MPI_INTEGER, b, n, MPI_INTEGER, root, MPI_COMM_WORLD, reqs(1), ierr)
  flag = .false.
  do while (.not. flag)
    call MPI_Testany(1, reqs, idx, flag, st, ierr)
  end do
  call expect_int(b, bigw(rank * n + 1:(rank + 1) * n), n, 'iscatter + testany')
  big = -1
  call MPI_Igather(b, n, MPI_INTEGER, big, n, MPI_INTEGER, root, MPI_COMM_WORLD, reqs(1), ierr)
  flag = .false.
  do while (.not. flag)
    call MPI_Testany(1, reqs, idx, flag, st, ierr)
  end do
  if (rank == root) call expect_int(big, bigw, n * nranks, 'igather + testany')

  ! all-to-all and all-gatherv, completed by MPI_Waitsome until none is left
  total = n / 10
  do r = 0, nranks - 1
    c(r * total + 1:(r + 1) * total) = rank * 1000 + r
    cw(r * total + 1:(r + 1) * total) = r * 1000 + rank
  end do
  d = -1
  call MPI_Ialltoall(c, total, MPI_INTEGER, d, total, MPI_INTEGER, MPI_COMM_WORLD, reqs(1), ierr)
  call vblocks()
  e = -1
  call MPI_Iallgatherv(a, rank + 1, MPI_INTEGER, e, counts, displs, MPI_INTEGER, MPI_COMM_WORLD, &
                       reqs(2), ierr)
  done = 0
  outcount = 0
  do while (outcount /= MPI_UNDEFINED)
    call MPI_Waitsome(2, reqs, outcount, indices, sts, ierr)
    if (outcount /= MPI_UNDEFINED) done = done + outcount
  end do
  call expect_true(done == 2, 'waitsome completes both')
  k = n / 10 * nranks ! vblocks changed total
  call expect_int(d(1:k), cw(1:k), k, 'ialltoall + waitsome')
  call expect_int(e(1:sum(counts)), bigw(1:sum(counts)), sum(counts), 'iallgatherv + waitsome')

  ! gatherv, scatterv, all-to-allv and reduce-scatter with unequal counts,
  ! all outstanding, polled with MPI_Request_get_status, then MPI_Testsome
  big = -1
  call MPI_Igatherv(a, rank + 1, MPI_INTEGER, big, counts, displs, MPI_INTEGER, root, &
                    MPI_COMM_WORLD, reqs(1), ierr)
  b = -1
  call MPI_Iscatterv(bigw, counts, displs, MPI_INTEGER, b, rank + 1, MPI_INTEGER, root, &
                     MPI_COMM_WORLD, reqs(2), ierr)
  total = 0
  do r = nranks - 1, 0, -1
    rcounts(r + 1) = rank + r + 1
    total = total + rank + r + 1
  end do
  k = 0
  do r = nranks - 1, 0, -1
    c(k + 1:k + rcounts(r + 1)) = rank * 1000 + r
    cw(k + 1:k + rcounts(r + 1)) = r * 1000 + rank
    dw(r + 1) = k
    k = k + rcounts(r + 1)
  end do
  d = -1
  call MPI_Ialltoallv(c, rcounts, dw, MPI_INTEGER, d, rcounts, dw, MPI_INTEGER, MPI_COMM_WORLD, &
                      reqs(3), ierr)
  ! reduce-scatter with unequal counts (the all-gatherv's: rank r gets r + 1)
  do i = 1, sum(counts)
    e(i) = mod(rank * 5 + i, 7)
  end do
  w = -1
  call MPI_Ireduce_scatter(e, w, counts, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, reqs(4), ierr)
  flag = .false.
  do while (.not. flag)
    call MPI_Request_get_status(reqs(4), flag, st, ierr)
  end do
  done = 0
  outcount = 0
  do while (outcount /= MPI_UNDEFINED)
    call MPI_Testsome(4, reqs, outcount, indices, MPI_STATUSES_IGNORE, ierr)
    if (outcount /= MPI_UNDEFINED) done = done + outcount
  end do
  call expect_true(done == 4, 'testsome completes all four')
  do i = 1, sum(counts)
    c(i) = 0
    do r = 0, nranks - 1
      c(i) = c(i) + mod(r * 5 + i, 7)
    end do
  end do
  k = rank * (rank + 1) / 2 ! rank r's block starts after those of ranks 0 .. r - 1
  call expect_int(w(1:rank + 1), c(k + 1:k + rank + 1), rank + 1, 'ireduce_scatter + testsome')
  if (rank == root) call expect_int(big(1:sum(counts)), bigw(1:sum(counts)), sum(counts), &
                                    'igatherv + testsome')
  call expect_int(b(1:rank + 1), a(1:rank + 1), rank + 1, 'iscatterv + testsome')
  call expect_int(d(1:total), cw(1:total), total, 'ialltoallv + testsome')

  ! progress inside a blocking receive: the last rank waits for the
  ! all-reduce (of 4 MB: many steps, each needing every rank) and then sends
  ! to rank 0, which receives before it waits
  allocate(p(np), pw(np), q(np))
  call values(p, pw, np, nranks - 1)
  q = -1
  call MPI_Iallreduce(p, q, np, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, req, ierr)
  if (nranks > 1 .and. rank == 0) then
    call MPI_Recv(k, 1, MPI_INTEGER, root, 7, MPI_COMM_WORLD, st, ierr)
    call expect_true(k == 4242 .and. st(MPI_SOURCE) == root .and. st(MPI_TAG) == 7, &
                     'recv while an iallreduce is outstanding')
  end if
  if (nranks > 1 .and. rank == root) then
    call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
    k = 4242
    call MPI_Send(k, 1, MPI_INTEGER, 0, 7, MPI_COMM_WORLD, ierr)
  end if
  call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
  call expect_int(q, pw, np, 'iallreduce around a receive')

  ! every rank's counts and digest to rank 0, summed
  call MPI_Allreduce(MPI_IN_PLACE, checks, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call MPI_Allreduce(MPI_IN_PLACE, failures, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call MPI_Allreduce(MPI_IN_PLACE, digest, 1, MPI_INTEGER8, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a,i0,a,i0,a,i0,a,i0)', 'test_fortran: ', nranks, ' ranks, ', checks, &
      ' checks, ', failures, ' failures, digest ', digest
  call MPI_Finalize(ierr)
  if (failures > 0) stop 1

contains

  ! The all-gatherv's blocks: rank r gives r + 1 integers (a), placed in
  ! reverse rank order (counts, displs); bigw is the gathered reference, of
  ! `total` integers.
  subroutine vblocks()
    integer :: q, j
    total = 0
    do q = nranks - 1, 0, -1
      counts(q + 1) = q + 1
      displs(q + 1) = total
      total = total + q + 1
    end do
    do q = 0, nranks - 1
      do j = 1, q + 1
        bigw(displs(q + 1) + j) = q * 1000 + j
      end do
    end do
    do j = 1, rank + 1
      a(j) = rank * 1000 + j
    end do
  end subroutine vblocks

  ! This rank's values (element i of rank r: (7 r + 3 i) mod 5) in v(1:m),
  ! and their sum over ranks 0 .. last in vw(1:m).
  subroutine values(v, vw, m, last)
    integer, intent(out) :: v(:), vw(:)
    integer, intent(in) :: m, last
    integer :: j, q
    do j = 1, m
      v(j) = mod(rank * 7 + j * 3, 5)
      vw(j) = 0
      do q = 0, last
        vw(j) = vw(j) + mod(q * 7 + j * 3, 5)
      end do
    end do
  end subroutine values

  subroutine expect_true(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    checks = checks + 1
    if (.not. ok .or. ierr /= MPI_SUCCESS) then
      failures = failures + 1
      print '(a,i0,a,a)', 'rank ', rank, ': FAIL ', what
    end if
  end subroutine expect_true

  subroutine expect_int(got, want, m, what)
    integer, intent(in) :: got(:), want(:), m
    character(len=*), intent(in) :: what
    integer :: k
    checks = checks + 1
    do k = 1, m
      digest = digest + int(got(k), 8) * int(k, 8)
    end do
    if (any(got(1:m) /= want(1:m)) .or. ierr /= MPI_SUCCESS) then
      failures = failures + 1
      print '(a,i0,a,a)', 'rank ', rank, ': FAIL ', what
    end if
  end subroutine expect_int

end program test_fortran
