! test_fortran.f90 - a plain Fortran MPI program (mpif.h) calling the
! collectives that libpccl_mpi.so intercepts, MPI_IN_PLACE included, each
! checked against a reference computed here. Prints the checks, failures and
! a digest of the results for run_dropin.sh to compare with and without the
! preload.
program test_fortran
  implicit none
  include 'mpif.h'
  integer, parameter :: n = 1000
  integer :: ierr, rank, nranks, i, r, root, checks, failures, total
  integer, allocatable :: a(:), b(:), w(:), big(:), bigw(:), counts(:), displs(:)
  double precision, allocatable :: x(:), xw(:)
  integer(kind=8) :: digest

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  allocate(a(n), b(n), w(n), big(n * nranks), bigw(n * nranks), x(n), xw(n), counts(nranks), &
           displs(nranks))
  checks = 0
  failures = 0
  digest = 0
  root = nranks - 1

  ! all-reduce, sum of integers: into another array, then in place
  do i = 1, n
    a(i) = mod(rank * 7 + i * 3, 5)
    w(i) = 0
    do r = 0, nranks - 1
      w(i) = w(i) + mod(r * 7 + i * 3, 5)
    end do
  end do
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
  do i = 1, n * nranks
    big(i) = mod(rank * 7 + i * 3, 5)
    bigw(i) = 0
    do r = 0, nranks - 1
      bigw(i) = bigw(i) + mod(r * 7 + i * 3, 5)
    end do
  end do
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
  do i = 1, n
    a(i) = mod(rank * 7 + i * 3, 5)
  end do
  do i = 1, n
    w(i) = 0
    do r = 0, rank
      w(i) = w(i) + mod(r * 7 + i * 3, 5)
    end do
  end do
  call MPI_Scan(a, b, n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call expect_int(b, w, n, 'scan')
  w = w - a
  b = a
  call MPI_Exscan(MPI_IN_PLACE, b, n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank > 0) call expect_int(b, w, n, 'exscan in place')

  ! all-gatherv: rank r gives r + 1 integers, placed in reverse rank order
  total = 0
  do r = nranks - 1, 0, -1
    counts(r + 1) = r + 1
    displs(r + 1) = total
    total = total + r + 1
  end do
  do r = 0, nranks - 1
    do i = 1, r + 1
      bigw(displs(r + 1) + i) = r * 1000 + i
    end do
  end do
  do i = 1, rank + 1
    a(i) = rank * 1000 + i
  end do
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

  ! every rank's counts and digest to rank 0, summed
  call MPI_Allreduce(MPI_IN_PLACE, checks, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call MPI_Allreduce(MPI_IN_PLACE, failures, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call MPI_Allreduce(MPI_IN_PLACE, digest, 1, MPI_INTEGER8, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a,i0,a,i0,a,i0,a,i0)', 'test_fortran: ', nranks, ' ranks, ', checks, &
      ' checks, ', failures, ' failures, digest ', digest
  call MPI_Finalize(ierr)
  if (failures > 0) stop 1

contains

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
