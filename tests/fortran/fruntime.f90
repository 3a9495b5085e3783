! fruntime.f90 - what the Fortran run-time does in a process-mode task,
! where libgfortran is the node's, shared by its tasks: each task reads its
! own command line; STOP n, ERROR STOP and a run-time error (a bounds check
! of -fcheck=bounds) end that task only, with libgfortran's message.
!
! Started from the shell with arguments (tests/fortran/run-fortran.sh:
! ./fruntime alpha beta): spawns 3 copies, which have no arguments (as
! pvmfspawn gives none), tells each what to do, waits until each ended
! (PvmTaskExit), then checks that its own arguments are still its own.
! Lines: "ok NAME" / "FAIL NAME ..." and "done".
program fruntime
  implicit none
  include 'fpvm3.h'
  integer :: mytid, parent, info, tids(3), numt, i, what, n, length, status
  character(len=64) :: arg, cmd
  call pvmfmytid(mytid)
  call pvmfparent(parent)
  if (parent /= PvmNoParent) then
    call pvmfrecv(parent, 1, info)
    call pvmfunpack(INTEGER4, what, 1, 1, info)
    call act(what, parent)
  end if
  call pvmfspawn('fruntime', PVMDEFAULT, '*', 3, tids, numt)
  if (numt /= 3) print '(a,i0)', 'FAIL spawn: ', numt
  call pvmfnotify(PVMTASKEXIT, 9, 3, tids, info)
  do i = 1, 3
    call pvmfinitsend(PVMDEFAULT, info)
    call pvmfpack(INTEGER4, i, 1, 1, info)
    call pvmfsend(tids(i), 1, info)
  end do
  ! what the copies saw of their command line
  call pvmfrecv(-1, 2, info)
  call pvmfunpack(INTEGER4, n, 1, 1, info)
  if (n == 0) then
    print '(a)', 'ok a spawned copy has no arguments'
  else
    print '(a,i0)', 'FAIL a spawned copy has arguments: ', n
  end if
  do i = 1, 3
    call pvmfrecv(-1, 9, info)
  end do
  print '(a)', 'ok every copy ended, the parent goes on'
  n = command_argument_count()
  call get_command_argument(1, arg, length, status)
  if (n == 2 .and. arg == 'alpha' .and. length == 5 .and. status == 0) then
    print '(a)', 'ok its own arguments, after its copies started'
  else
    print '(a,i0,a,a,a,i0,a,i0)', 'FAIL arguments: count ', n, ' [', trim(arg), &
      '] length ', length, ' status ', status
  end if
  call get_command_argument(2, arg(1:2), length, status)
  if (arg(1:2) == 'be' .and. length == 4 .and. status == -1) then
    print '(a)', 'ok an argument longer than its variable'
  else
    print '(a,a,a,i0,a,i0)', 'FAIL short variable: [', arg(1:2), '] length ', length, &
      ' status ', status
  end if
  call get_command(cmd, length, status)
  i = index(cmd, '/', back=.true.)
  if (cmd(i + 1:) == 'fruntime alpha beta' .and. status == 0) then
    print '(a)', 'ok get_command'
  else
    print '(a,a,a)', 'FAIL get_command: [', trim(cmd), ']'
  end if
  call getarg(2, arg)
  if (arg == 'beta') then
    print '(a)', 'ok getarg'
  else
    print '(a,a,a)', 'FAIL getarg: [', trim(arg), ']'
  end if
  call pvmfexit(info)
  print '(a)', 'done'
end program fruntime

subroutine act(what, parent)
  implicit none
  include 'fpvm3.h'
  integer, intent(in) :: what, parent
  integer :: info, a(10), i, n
  if (what == 1) then
    call pvmfinitsend(PVMDEFAULT, info)
    n = command_argument_count()
    call pvmfpack(INTEGER4, n, 1, 1, info)
    call pvmfsend(parent, 2, info)
    stop 3
  else if (what == 2) then
    error stop 'in a copy'
  end if
  do i = 1, 11                           ! a(11): out of bounds
    a(i) = i
  end do
  print *, a(1)
end subroutine act
