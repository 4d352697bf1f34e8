! test_fortran_f08.f90 - the mpi_f08 module's path into the drop-in (Open
! MPI's reaches its Fortran wrappers, ompi_*_f, which the drop-in takes):
! blocking and non-blocking collectives, MPI_IN_PLACE, the vector forms and
! the completion calls, each result checked against its closed form;
! prints the checks, failures and a digest for run_dropin.sh.
program test_fortran_f08
  use mpi_f08
  implicit none
  integer, parameter :: n = 1000
  integer :: rank, nranks, i, r, checks, failures, x(n), y(n), z(n), want, ierr
  integer, allocatable :: counts(:), displs(:), all(:)
  type(MPI_Request) :: reqs(2)
  integer(8) :: digest
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)
  checks = 0
  failures = 0
  digest = 0
  do i = 1, n
    x(i) = rank + i
  end do
  ! all-reduce into another array, then in place; broadcast from the last rank
  call MPI_Allreduce(x, y, n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  z = x
  call MPI_Allreduce(MPI_IN_PLACE, z, n, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, ierr)
  do i = 1, n
    want = nranks * i + nranks * (nranks - 1) / 2
    call check(y(i) == want .and. z(i) == nranks - 1 + i)
  end do
  digest = digest + sum(int(y, 8)) + sum(int(z, 8))
  z = x
  call MPI_Bcast(z, n, MPI_INTEGER, nranks - 1, MPI_COMM_WORLD)
  do i = 1, n
    call check(z(i) == nranks - 1 + i)
  end do
  ! gatherv and scatterv at rank 0: rank r's block r + 1 elements of value 10 r + j
  allocate(counts(nranks), displs(nranks), all(nranks * (nranks + 1) / 2))
  do r = 0, nranks - 1
    counts(r + 1) = r + 1
    displs(r + 1) = r * (r + 1) / 2
  end do
  do i = 1, rank + 1
    z(i) = 10 * rank + i
  end do
  all = -1
  call MPI_Gatherv(z, rank + 1, MPI_INTEGER, all, counts, displs, MPI_INTEGER, 0, MPI_COMM_WORLD)
  if (rank == 0) then
    do r = 0, nranks - 1
      do i = 1, r + 1
        call check(all(displs(r + 1) + i) == 10 * r + i)
      end do
    end do
    digest = digest + sum(int(all, 8))
    all = all + 1
  end if
  z = -1
  call MPI_Scatterv(all, counts, displs, MPI_INTEGER, z, rank + 1, MPI_INTEGER, 0, MPI_COMM_WORLD)
  do i = 1, rank + 1
    call check(z(i) == 10 * rank + i + 1)
  end do
  call check(z(rank + 2) == -1)
  ! non-blocking: an all-reduce and a broadcast outstanding together
  y = 0
  z = x
  call MPI_Iallreduce(x, y, n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, reqs(1))
  call MPI_Ibcast(z, n, MPI_INTEGER, 0, MPI_COMM_WORLD, reqs(2))
  call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE)
  call MPI_Iallreduce(MPI_IN_PLACE, z, n, MPI_INTEGER, MPI_MIN, MPI_COMM_WORLD, reqs(1))
  call MPI_Wait(reqs(1), MPI_STATUS_IGNORE)
  do i = 1, n
    want = nranks * i + nranks * (nranks - 1) / 2
    call check(y(i) == want .and. z(i) == i)
  end do
  digest = digest + sum(int(y, 8)) + sum(int(z, 8))
  call MPI_Barrier(MPI_COMM_WORLD)
  call MPI_Allreduce(MPI_IN_PLACE, failures, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (rank == 0) print '(a,i0,a,i0,a,i0,a,i0)', 'test_fortran_f08: ', nranks, ' ranks, ', &
      checks, ' checks, ', failures, ' failures, digest ', digest
  call MPI_Finalize()
  if (failures > 0) stop 1
contains
  subroutine check(ok)
    logical, intent(in) :: ok
    checks = checks + 1
    if (.not. ok) failures = failures + 1
  end subroutine check
end program test_fortran_f08
