! A Fortran program that knows nothing of Convoy: Allreduce (INTEGER and DOUBLE
! PRECISION, and in place), Bcast, Allgather, Reduce and Barrier through the Fortran
! bindings (`use mpi`), blocking; their nonblocking forms completed by MPI_WAIT, an
! MPI_TEST loop, MPI_WAITALL beside point-to-point requests and MPI_WAITANY; persistent
! Allreduce and Bcast (MPI_ALLREDUCE_INIT, or Open MPI 4.1's MPIX_ALLREDUCE_INIT with
! -DCONVOY_MPIX) restarted by MPI_STARTALL and completed by MPI_WAITALL, then freed; and
! an MPI_IALLREDUCE still pending while one rank blocks in MPI_RECV for a message its
! peer sends only after its own MPI_WAIT on it (progress). Each result is checked against
! its hand-derived value. Run with libconvoy_pmpi preloaded; fortran_check.sh then checks
! CONVOY_STATS' counts, which show whether the Fortran calls reached Convoy.
program test_fortran
  use mpi
  implicit none
  integer, parameter :: n = 1000, reps = 3
  integer :: ierr, rank, p, i, r, isum, bad, root, idx, tok, mine
  integer :: ib(n), req, reqs(3), preq(2), st(MPI_STATUS_SIZE), sts(MPI_STATUS_SIZE, 3)
  double precision :: d(n), dr(n), dmax(n)
  integer, allocatable :: g(:)
  logical :: flag

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

    ! Nonblocking: MPI_WAIT
    dr = 0
    call MPI_Iallreduce(d, dr, n, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, req, ierr)
    call MPI_Wait(req, st, ierr)
    do i = 1, n
      if (dr(i) /= dble(i) * p * (p + 1) / 2) bad = bad + 1
    end do
    if (ierr /= MPI_SUCCESS .or. req /= MPI_REQUEST_NULL) bad = bad + 1

    ! an MPI_TEST loop
    ib = -1
    if (rank == root) ib = 3 * r
    call MPI_Ibcast(ib, n, MPI_INTEGER, root, MPI_COMM_WORLD, req, ierr)
    flag = .false.
    do while (.not. flag)
      call MPI_Test(req, flag, MPI_STATUS_IGNORE, ierr)
    end do
    if (any(ib /= 3 * r)) bad = bad + 1

    ! MPI_WAITALL over the collective and a ring exchange (a nonblocking call's send
    ! buffer must live until completion: a variable, not an expression's temporary)
    g = -1
    mine = rank + r
    call MPI_Iallgather(mine, 1, MPI_INTEGER, g, 1, MPI_INTEGER, MPI_COMM_WORLD, reqs(1), ierr)
    call MPI_Irecv(tok, 1, MPI_INTEGER, mod(rank + p - 1, p), 7, MPI_COMM_WORLD, reqs(2), ierr)
    call MPI_Isend(rank, 1, MPI_INTEGER, mod(rank + 1, p), 7, MPI_COMM_WORLD, reqs(3), ierr)
    call MPI_Waitall(3, reqs, sts, ierr)
    do i = 1, p
      if (g(i) /= i - 1 + r) bad = bad + 1
    end do
    if (tok /= mod(rank + p - 1, p) .or. sts(MPI_SOURCE, 2) /= mod(rank + p - 1, p)) bad = bad + 1

    ! MPI_WAITANY
    call MPI_Ibarrier(MPI_COMM_WORLD, reqs(1), ierr)
    call MPI_Waitany(1, reqs, idx, st, ierr)
    if (ierr /= MPI_SUCCESS .or. idx /= 1 .or. reqs(1) /= MPI_REQUEST_NULL) bad = bad + 1
  end do

  ! Persistent: started 3 times by MPI_STARTALL, completed by MPI_WAITALL, freed.
#ifdef CONVOY_MPIX
  call MPIX_Allreduce_init(d, dr, n, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, &
                           MPI_INFO_NULL, preq(1), ierr)
  call MPIX_Bcast_init(ib, n, MPI_INTEGER, 0, MPI_COMM_WORLD, MPI_INFO_NULL, preq(2), ierr)
#else
  call MPI_Allreduce_init(d, dr, n, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, &
                          MPI_INFO_NULL, preq(1), ierr)
  call MPI_Bcast_init(ib, n, MPI_INTEGER, 0, MPI_COMM_WORLD, MPI_INFO_NULL, preq(2), ierr)
#endif
  do r = 1, reps
    do i = 1, n
      d(i) = dble(i) * (rank + r)
    end do
    ib = -1
    if (rank == 0) ib = 5 * r
    call MPI_Startall(2, preq, ierr)
    call MPI_Waitall(2, preq, MPI_STATUSES_IGNORE, ierr)
    do i = 1, n
      if (dr(i) /= dble(i) * (p * (p - 1) / 2 + p * r)) bad = bad + 1
    end do
    if (any(ib /= 5 * r) .or. preq(1) == MPI_REQUEST_NULL) bad = bad + 1
  end do
  call MPI_Request_free(preq(1), ierr)
  call MPI_Request_free(preq(2), ierr)
  if (preq(1) /= MPI_REQUEST_NULL .or. preq(2) /= MPI_REQUEST_NULL) bad = bad + 1

  ! Progress: rank 0 blocks in MPI_RECV while its Iallreduce is pending; rank p-1 sends
  ! only after its own MPI_WAIT, which needs rank 0's part.
  do i = 1, n
    d(i) = dble(i) * (rank + 1)
  end do
  call MPI_Iallreduce(d, dr, n, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, req, ierr)
  if (rank == 0 .and. p > 1) then
    call MPI_Recv(tok, 1, MPI_INTEGER, p - 1, 9, MPI_COMM_WORLD, st, ierr)
    if (tok /= 42) bad = bad + 1
  end if
  call MPI_Wait(req, st, ierr)
  if (rank == p - 1 .and. p > 1) call MPI_Send(42, 1, MPI_INTEGER, 0, 9, MPI_COMM_WORLD, ierr)
  do i = 1, n
    if (dr(i) /= dble(i) * p * (p + 1) / 2) bad = bad + 1
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
