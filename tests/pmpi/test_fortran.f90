! A Fortran program that knows nothing of Convoy: Allreduce (INTEGER and DOUBLE
! PRECISION, and in place), Bcast, Allgather, Reduce and Barrier through the Fortran
! bindings (`use mpi`), each result checked against its hand-derived value. Run with
! libconvoy_pmpi preloaded; fortran_check.sh then checks CONVOY_STATS' counts, which
! show whether the Fortran calls reached Convoy.
program test_fortran
  use mpi
  implicit none
  integer, parameter :: n = 1000, reps = 3
  integer :: ierr, rank, p, i, r, isum, bad, root
  integer :: ib(n)
  double precision :: d(n), dr(n), dmax(n)
  integer, allocatable :: g(:)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, p, ierr)
  allocate(g(p))
  bad = 0
  do r = 1, reps
    call MPI_Allreduce(rank + 1, isum, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    if (ierr /= MPI_SUCCESS .or. isum /= p * (p + 1) / 2) bad = bad + 1

    do i = 1, n
      d(i) = dble(i) * (rank + 1)
    end do
    call MPI_Allreduce(d, dr, n, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
    do i = 1, n
      if (dr(i) /= dble(i) * p * (p + 1) / 2) bad = bad + 1
    end do

    dmax = d
    call MPI_Allreduce(MPI_IN_PLACE, dmax, n, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD, &
                       ierr)
    do i = 1, n
      if (dmax(i) /= dble(i) * p) bad = bad + 1
    end do

    root = mod(r, p)
    ib = -1
    if (rank == root) then
      do i = 1, n
        ib(i) = i + 7 * r
      end do
    end if
    call MPI_Bcast(ib, n, MPI_INTEGER, root, MPI_COMM_WORLD, ierr)
    do i = 1, n
      if (ib(i) /= i + 7 * r) bad = bad + 1
    end do

    g = -1
    call MPI_Allgather(rank * r, 1, MPI_INTEGER, g, 1, MPI_INTEGER, MPI_COMM_WORLD, ierr)
    do i = 1, p
      if (g(i) /= (i - 1) * r) bad = bad + 1
    end do

    isum = -1
    call MPI_Reduce(rank, isum, 1, MPI_INTEGER, MPI_SUM, root, MPI_COMM_WORLD, ierr)
    if (rank == root .and. isum /= p * (p - 1) / 2) bad = bad + 1

    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    if (ierr /= MPI_SUCCESS) bad = bad + 1
  end do

  call MPI_Allreduce(MPI_IN_PLACE, bad, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    if (bad == 0) then
      print '(a)', 'test_fortran: all results correct'
    else
      print '(a,i0,a)', 'test_fortran: ', bad, ' wrong results'
    end if
  end if
  call MPI_Finalize(ierr)
  if (bad /= 0) stop 1
end program test_fortran
