! test_fortran_module.f90 - the `use mpi` module's path into the drop-in: an
! all-reduce into another array and one in place, checked against the
! closed form; prints the checks, failures and a digest for run_dropin.sh.
program test_fortran_module
  use mpi
  implicit none
  integer, parameter :: n = 4096
  integer :: ierr, rank, nranks, i, failures, x(n), y(n), want
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  do i = 1, n
    x(i) = rank + i
  end do
  call MPI_Allreduce(x, y, n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call MPI_Allreduce(MPI_IN_PLACE, x, n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  failures = 0
  do i = 1, n
    want = nranks * i + nranks * (nranks - 1) / 2
    if (x(i) /= want .or. y(i) /= want) failures = failures + 1
  end do
  call MPI_Allreduce(MPI_IN_PLACE, failures, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a,i0,a,i0,a,i0,a,i0)', 'test_fortran_module: ', nranks, ' ranks, ', &
      2 * n, ' checks, ', failures, ' failures, digest ', sum(int(x, 8)) + sum(int(y, 8))
  call MPI_Finalize(ierr)
  if (failures > 0) stop 1
end program test_fortran_module
