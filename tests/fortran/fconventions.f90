! fconventions.f90 - the conventions of the Fortran binding (pvmf*),
! checked from Fortran: CHARACTER arguments (trailing blanks, lengths),
! pvmfpack/pvmfunpack of every type code with strides in every encoding,
! pvmftrecv's timeout, error codes returned in info, the one-entry-per-call
! lists (pvmfconfig, pvmftasks, pvmfgetmboxinfo), reduce/gather/scatter
! with PVM's and a program's own functions, pvmfaddmhf, pvmfnotify.
!
! Started from the shell it is the parent: it spawns NKIDS copies of
! itself (found as PVM finds programs: PVM_PATH) for the collective part.
! Prints one line per check, "ok NAME" or "FAIL NAME: got X, want Y", and
! "done N checks, F failed" at the end (tests/fortran/run-fortran.sh reads
! them).  Free-form source: fpvm3.h is valid in both forms.
program fconventions
  implicit none
  include 'fpvm3.h'
  integer, parameter :: NKIDS = 3
  integer :: mytid, parent, info
  integer :: nchecks, nfailed
  common /counts/ nchecks, nfailed

  nchecks = 0
  nfailed = 0
  call pvmfmytid(mytid)
  call pvmfparent(parent)
  if (parent /= PvmNoParent) then
    call child(parent)
    call pvmfexit(info)
    stop
  end if
  call check('mytid is a tid', merge(1, 0, mytid > 0), 1)
  call strings(mytid)
  call packing(mytid)
  call timeouts(mytid)
  call errors(mytid)
  call lists(mytid)
  call handlers(mytid)
  call collective(mytid, NKIDS)
  print '(a,i0,a,i0,a)', 'done ', nchecks, ' checks, ', nfailed, ' failed'
  call pvmfexit(info)
end program fconventions

subroutine check(name, got, want)
  implicit none
  character(len=*), intent(in) :: name
  integer, intent(in) :: got, want
  integer :: nchecks, nfailed
  common /counts/ nchecks, nfailed
  nchecks = nchecks + 1
  if (got == want) then
    print '(a,a)', 'ok ', name
  else
    nfailed = nfailed + 1
    print '(a,a,a,i0,a,i0)', 'FAIL ', name, ': got ', got, ', want ', want
  end if
end subroutine check

! CHARACTER arguments: trailing blanks are dropped, names too long for
! PVM are PvmBadParam, returned names are blank-padded.
subroutine strings(mytid)
  implicit none
  include 'fpvm3.h'
  integer, intent(in) :: mytid
  integer :: inum, tid, info, bufid, idx, n
  character(len=40) :: padded
  character(len=300) :: long
  character(len=8) :: got8

  padded = 'fgroup'                        ! 34 trailing blanks
  call pvmfjoingroup(padded, inum)
  call check('joingroup with blanks', inum, 0)
  call pvmfgettid('fgroup', 0, tid)      ! the same group, no blanks
  call check('gettid of the trimmed name', tid, mytid)
  call pvmfgetinst('fgroup  ', mytid, inum)
  call check('getinst, other blanks', inum, 0)
  call pvmfgsize('fgroup', n)
  call check('gsize', n, 1)
  call pvmflvgroup('fgroup', info)
  call check('lvgroup', info, PvmOk)

  long = repeat('g', 32)                 ! PVM's groups: 31 characters
  call pvmfjoingroup(long, inum)
  call check('group name of 32 characters', inum, PvmBadParam)
  long = repeat('g', 31)
  call pvmfjoingroup(long, inum)
  call check('group name of 31 characters', inum, 0)
  call pvmflvgroup(long, info)
  long = repeat('p', 257)                ! task names: 256
  call pvmfspawn(long, PVMDEFAULT, '*', 1, tid, n)
  call check('task name of 257 characters', n, PvmBadParam)

  ! mailbox: put under a padded name, read under the trimmed one
  call pvmfinitsend(PVMDEFAULT, bufid)
  call pvmfpack(STRING, 'abcdefgh', 8, 1, info)
  call pvmfputinfo('fbox      ', bufid, PVMMBOXDEFAULT, idx)
  call check('putinfo index', idx, 0)
  call pvmfrecvinfo('fbox', 0, PVMMBOXDEFAULT, bufid)
  call check('recvinfo finds it', merge(1, 0, bufid > 0), 1)
  got8 = '        '
  call pvmfunpack(STRING, got8, 8, 1, info)
  call check('STRING round trip', merge(1, 0, got8 == 'abcdefgh'), 1)
  call pvmfdelinfo('fbox', 0, PVMMBOXDEFAULT, info)
  call check('delinfo', info, PvmOk)
end subroutine strings

! Every type code, with a stride of 2, in each encoding: sent to itself,
! unpacked with a stride of 3 into another array.
subroutine packing(mytid)
  implicit none
  include 'fpvm3.h'
  integer, intent(in) :: mytid
  integer :: enc, i, info, bufid, bytes, tag, src
  integer :: encs(3)
  character(len=1) :: b(8), bb(12)
  integer(kind=2) :: h(8), hh(12)
  integer(kind=4) :: k(8), kk(12)
  integer(kind=8) :: l(8), ll(12)
  real(kind=4) :: r(8), rr(12)
  real(kind=8) :: d(8), dd(12)
  complex(kind=4) :: c(8), cc(12)
  complex(kind=8) :: z(8), zz(12)
  character(len=12) :: s, ss
  character(len=48) :: name
  logical :: same

  encs = (/ PVMDATADEFAULT, PVMDATARAW, PVMDATARAW /)
  do i = 1, 8
    b(i) = achar(64 + i)
    h(i) = int(-300 * i, 2)
    k(i) = -100000 * i
    l(i) = -50000_8 * i                  ! XDR: longs of 32 bits
    r(i) = 1.5 * i
    d(i) = 1.0d0 / i
    c(i) = cmplx(i, -i, 4)
    z(i) = cmplx(1.0d0 / i, 2.0d0 * i, 8)
  end do
  s = 'stride test '
  do enc = 1, 3
    call pvmfinitsend(encs(enc), bufid)
    call pvmfpack(BYTE1, b, 4, 2, info)
    call pvmfpack(INTEGER2, h, 4, 2, info)
    call pvmfpack(INTEGER4, k, 4, 2, info)
    call pvmfpack(INTEGER8, l, 4, 2, info)
    call pvmfpack(REAL4, r, 4, 2, info)
    call pvmfpack(COMPLEX8, c, 4, 2, info)
    call pvmfpack(REAL8, d, 4, 2, info)
    call pvmfpack(COMPLEX16, z, 4, 2, info)
    call pvmfpack(STRING, s, 12, 1, info)
    write (name, '(a,i0)') 'pack, encoding ', encs(enc)
    call check(trim(name), info, PvmOk)
    call pvmfsend(mytid, 10 + enc, info)
    call pvmfrecv(mytid, 10 + enc, bufid)
    call pvmfbufinfo(bufid, bytes, tag, src, info)
    call check('bufinfo tag', tag, 10 + enc)
    call check('bufinfo source', src, mytid)
    bb = ' '
    hh = 0
    kk = 0
    ll = 0
    rr = 0
    cc = 0
    dd = 0
    zz = 0
    ss = ' '
    call pvmfunpack(BYTE1, bb, 4, 3, info)
    call pvmfunpack(INTEGER2, hh, 4, 3, info)
    call pvmfunpack(INTEGER4, kk, 4, 3, info)
    call pvmfunpack(INTEGER8, ll, 4, 3, info)
    call pvmfunpack(REAL4, rr, 4, 3, info)
    call pvmfunpack(COMPLEX8, cc, 4, 3, info)
    call pvmfunpack(REAL8, dd, 4, 3, info)
    call pvmfunpack(COMPLEX16, zz, 4, 3, info)
    call pvmfunpack(STRING, ss, 12, 1, info)
    write (name, '(a,i0)') 'unpack, encoding ', encs(enc)
    call check(trim(name), info, PvmOk)
    same = all(bb(1:12:3) == b(1:8:2)) .and. all(hh(1:12:3) == h(1:8:2)) &
      .and. all(kk(1:12:3) == k(1:8:2)) .and. all(rr(1:12:3) == r(1:8:2)) &
      .and. all(cc(1:12:3) == c(1:8:2)) .and. all(dd(1:12:3) == d(1:8:2)) &
      .and. all(zz(1:12:3) == z(1:8:2)) .and. ss == s
    write (name, '(a,i0)') 'strided values, encoding ', encs(enc)
    call check(trim(name), merge(1, 0, same), 1)
    ! the items between the strided ones are untouched
    same = all(kk(2:12:3) == 0) .and. all(dd(3:12:3) == 0)
    call check('gaps untouched', merge(1, 0, same), 1)
    write (name, '(a,i0)') 'INTEGER8 values, encoding ', encs(enc)
    call check(trim(name), merge(1, 0, all(ll(1:12:3) == l(1:8:2))), 1)
  end do
  ! PVMDATAINPLACE: stride 1 only (PVM's too), a stride is PvmNotImpl
  call pvmfsetopt(PVMAUTOERR, 0, i)
  call pvmfinitsend(PVMDATAINPLACE, bufid)
  call pvmfpack(REAL8, d, 4, 2, info)
  call check('in place with a stride', info, PvmNotImpl)
  call pvmfpack(REAL8, d, 8, 1, info)
  call pvmfpack(COMPLEX8, c, 8, 1, info)
  call pvmfsend(mytid, 18, info)
  call pvmfrecv(mytid, 18, bufid)
  dd = 0
  cc = 0
  call pvmfunpack(REAL8, dd, 8, 1, info)
  call pvmfunpack(COMPLEX8, cc, 8, 1, info)
  same = all(dd(1:8) == d) .and. all(cc(1:8) == c)
  call check('in place, stride 1', merge(1, 0, same), 1)
  call pvmfsetopt(PVMAUTOERR, 1, i)
  ! an INTEGER8 beyond 32 bits: native encodings carry it, XDR's long
  ! (4 bytes, as PVM's) cannot: PvmOverflow
  l(1) = 5000000000_8
  call pvmfinitsend(PVMDATARAW, bufid)
  call pvmfpack(INTEGER8, l, 1, 1, info)
  call pvmfsend(mytid, 19, info)
  call pvmfrecv(mytid, 19, bufid)
  ll(1) = 0
  call pvmfunpack(INTEGER8, ll, 1, 1, info)
  call check('INTEGER8 beyond 32 bits, raw', merge(1, 0, ll(1) == l(1)), 1)
  call pvmfsetopt(PVMAUTOERR, 0, i)
  call pvmfinitsend(PVMDATADEFAULT, bufid)
  call pvmfpack(INTEGER8, l, 1, 1, info)
  call check('INTEGER8 beyond 32 bits, XDR', info, PvmOverflow)
  call pvmfsetopt(PVMAUTOERR, 1, i)
end subroutine packing

! pvmftrecv: 0 and 0 polls, a time waits at most that long, -1 waits.
subroutine timeouts(mytid)
  implicit none
  include 'fpvm3.h'
  integer, intent(in) :: mytid
  integer :: bufid, info
  integer(kind=8) :: t0, t1, rate
  call pvmftrecv(-1, 77, 0, 0, bufid)
  call check('trecv 0,0 with nothing there', bufid, 0)
  call system_clock(t0, rate)
  call pvmftrecv(-1, 77, 0, 300000, bufid)
  call system_clock(t1)
  call check('trecv 0.3 s with nothing there', bufid, 0)
  call check('trecv waited 0.3 s', merge(1, 0, (t1 - t0) * 1000 / rate >= 290), 1)
  call pvmfinitsend(PVMDATARAW, bufid)
  call pvmfsend(mytid, 77, info)
  call pvmftrecv(-1, 77, 5, 0, bufid)
  call check('trecv with a message', merge(1, 0, bufid > 0), 1)
  call pvmfsend(mytid, 78, info)
  call pvmftrecv(-1, 78, -1, 0, bufid)
  call check('trecv -1 blocks and gets it', merge(1, 0, bufid > 0), 1)
  call pvmfnrecv(-1, 78, bufid)
  call check('nrecv with nothing there', bufid, 0)
  call pvmfprobe(-1, 78, bufid)
  call check('probe with nothing there', bufid, 0)
end subroutine timeouts

! A wrong argument: the code PVM returns, in the info argument.
subroutine errors(mytid)
  implicit none
  include 'fpvm3.h'
  integer, intent(in) :: mytid
  integer :: info, bufid, k, tid, n, old
  call pvmfsetopt(PVMAUTOERR, 0, old)     ! no reports of the errors below
  call check('setopt returns the old value', old, 1)
  call pvmfgetopt(PVMAUTOERR, k)
  call check('getopt', k, 0)
  call pvmfinitsend(PVMDEFAULT, bufid)
  call pvmfpack(99, k, 1, 1, info)
  call check('pack of type code 99', info, PvmBadParam)
  call pvmfunpack(-1, k, 1, 1, info)
  call check('unpack of type code -1', info, PvmBadParam)
  call pvmfsend(-5, 1, info)
  call check('send to tid -5', info, PvmBadParam)
  call pvmffreebuf(12345, info)
  call check('freebuf of no buffer', info, PvmNoSuchBuf)
  call pvmfgetinst('nosuchgroup', mytid, n)
  call check('getinst of no group', n, PvmNoGroup)
  call pvmfsiblings(n, 5, tid)
  call check('siblings count (started alone)', n, 1)
  call check('siblings index 5', tid, PvmNoTask)
  call pvmfsiblings(n, 0, tid)
  call check('siblings index 0', tid, mytid)
  call pvmfrecvinfo('nosuchbox', 0, PVMMBOXDEFAULT, bufid)
  call check('recvinfo of no mailbox', bufid, PvmNotFound)
  call pvmfpstat(mytid, info)
  call check('pstat of itself', info, PvmOk)
  call pvmfsetopt(PVMAUTOERR, 1, old)
end subroutine errors

! The lists PVM's libfpvm returns one entry per call.
subroutine lists(mytid)
  implicit none
  include 'fpvm3.h'
  integer, intent(in) :: mytid
  integer :: nhost, narch, dtid, speed, info, i, ntask, tid, ptid, flag, bufid
  integer :: nclasses, nentries, idx(4), owner(4), flags(4)
  character(len=64) :: host, arch, aout
  character(len=16) :: name
  logical :: found
  nhost = 0
  call pvmfconfig(nhost, narch, dtid, host, arch, speed, info)
  call check('config: info for a host', info, 1)
  call check('config: nhost > 0', merge(1, 0, nhost > 0), 1)
  call check('config: a host name', merge(1, 0, len_trim(host) > 0), 1)
  call check('config: arch LINUX64, blank-padded', merge(1, 0, arch == 'LINUX64'), 1)
  do i = 2, nhost
    call pvmfconfig(nhost, narch, dtid, host, arch, speed, info)
  end do
  call pvmftidtohost(mytid, i)
  call check('tidtohost is a host', merge(1, 0, i > 0), 1)
  found = .false.
  ntask = -1
  do i = 1, 1000
    call pvmftasks(0, ntask, tid, ptid, dtid, flag, aout, info)
    if (info /= 1) exit
    if (tid == mytid) found = .true.
    if (i >= ntask) exit
  end do
  call check('tasks lists this task', merge(1, 0, found), 1)
  call pvmfinitsend(PVMDEFAULT, bufid)
  call pvmfputinfo('flist', bufid, PVMMBOXMULTIINSTANCE, i)
  call pvmfputinfo('flist', bufid, PVMMBOXMULTIINSTANCE, i)
  nclasses = -1
  call pvmfgetmboxinfo('flist', name, nclasses, nentries, idx, owner, flags, info)
  call check('getmboxinfo info', info, PvmOk)
  call check('getmboxinfo classes', nclasses, 1)
  call check('getmboxinfo name', merge(1, 0, name == 'flist'), 1)
  call check('getmboxinfo entries', nentries, 2)
  call check('getmboxinfo owner', owner(2), mytid)
  call pvmfgetmboxinfo('nothing*here', name, nclasses, nentries, idx, owner, flags, info)
  call check('getmboxinfo of nothing', info, PvmNotFound)
end subroutine lists

! A message handler: a Fortran function, given the buffer id by reference.
integer function onmsg(bufid)
  implicit none
  include 'fpvm3.h'
  integer, intent(in) :: bufid
  integer :: info, v, seen, bytes, tag, src
  common /handled/ seen
  call pvmfbufinfo(bufid, bytes, tag, src, info)   ! bufid by reference
  call pvmfunpack(INTEGER4, v, 1, 1, info)
  seen = v + tag
  onmsg = 0
end function onmsg

subroutine handlers(mytid)
  implicit none
  include 'fpvm3.h'
  integer, intent(in) :: mytid
  integer :: mhid, info, bufid, v, seen, dummy
  integer, external :: onmsg
  common /handled/ seen
  seen = 0
  call pvmfaddmhf(-1, 55, -1, dummy, onmsg, mhid)
  call check('addmhf gives an id', merge(1, 0, mhid > 0), 1)
  call pvmfinitsend(PVMDEFAULT, bufid)
  v = 4711
  call pvmfpack(INTEGER4, v, 1, 1, info)
  call pvmfsend(mytid, 55, info)
  call pvmfnrecv(-1, 56, bufid)          ! a receive runs the handlers
  call check('the handler got the message and its id', seen, 4711 + 55)
  call pvmfdelmhf(mhid, info)
  call check('delmhf', info, PvmOk)
  call pvmfsetopt(PVMAUTOERR, 0, info)
  call pvmfdelmhf(mhid, info)
  call check('delmhf again', info, PvmNotFound)
  call pvmfsetopt(PVMAUTOERR, 1, info)
end subroutine handlers

! The program's own reduce function: elementwise x = x - y.
subroutine minus(datatype, x, y, num, info)
  implicit none
  include 'fpvm3.h'
  integer :: datatype, num, info
  integer :: x(num), y(num)
  if (datatype /= INTEGER4) then
    info = PvmBadParam
    return
  end if
  x = x - y
  info = PvmOk
end subroutine minus

! Spawned copies join a group with the parent; instance i contributes
! (i+1, 10*(i+1)); the parent checks sums, products, max, min, the
! program's own function, gather and scatter, and each child's exit.
subroutine collective(mytid, nkids)
  implicit none
  include 'fpvm3.h'
  integer, intent(in) :: mytid, nkids
  integer :: tids(16), numt, info, i, n
  integer :: v(2), all(2 * 16), part(2)
  real(kind=8) :: p(1)
  external PvmSum, PvmProduct, PvmMax, PvmMin, minus
  call pvmfcatchout(1, info)
  call pvmfjoingroup('fcoll', i)
  call pvmfspawn('fconventions', PVMDEFAULT, '*', nkids, tids, numt)
  call check('spawn of copies', numt, nkids)
  call pvmfnotify(PVMTASKEXIT, 99, nkids, tids, info)
  call check('notify', info, PvmOk)
  call pvmffreezegroup('fcoll', nkids + 1, info)
  n = nkids + 1
  v = (/ 1, 10 /)
  call pvmfreduce(PvmSum, v, 2, INTEGER4, 20, 'fcoll', 0, info)
  call check('reduce PvmSum', v(1), n * (n + 1) / 2)
  call check('reduce PvmSum, 2nd item', v(2), 10 * n * (n + 1) / 2)
  p(1) = 1.0d0
  call pvmfreduce(PvmProduct, p, 1, REAL8, 21, 'fcoll', 0, info)
  call check('reduce PvmProduct (REAL8)', nint(p(1)), product((/ (i, i = 1, n) /)))
  v = (/ 1, 10 /)
  call pvmfreduce(PvmMax, v, 2, INTEGER4, 22, 'fcoll', 0, info)
  call check('reduce PvmMax', v(1), n)
  v = (/ 1, 10 /)
  call pvmfreduce(PvmMin, v, 2, INTEGER4, 23, 'fcoll', 0, info)
  call check('reduce PvmMin', v(2), 10)
  v = (/ 1, 10 /)
  call pvmfreduce(minus, v, 2, INTEGER4, 24, 'fcoll', 0, info)
  call check('reduce with a Fortran function: info', info, PvmOk)
  call check('reduce with a Fortran function', v(1), 1 - (n * (n + 1) / 2 - 1))
  v = (/ 1, 10 /)
  call pvmfgather(all, v, 2, INTEGER4, 25, 'fcoll', 0, info)
  call check('gather', sum(all(1:2 * n:2)) * 100 + sum(all(2:2 * n:2)), &
             100 * n * (n + 1) / 2 + 10 * n * (n + 1) / 2)
  do i = 1, n
    all(2 * i - 1) = 1000 + i
    all(2 * i) = 2000 + i
  end do
  call pvmfscatter(part, all, 2, INTEGER4, 26, 'fcoll', 0, info)
  call check('scatter to the root', part(1) + part(2), 1001 + 2001)
  call pvmfbarrier('fcoll', n, info)
  call check('barrier', info, PvmOk)
  do i = 1, nkids
    call pvmfrecv(-1, 99, info)
  end do
  call check('every child ended (notify PvmTaskExit)', 1, 1)
  call pvmflvgroup('fcoll', info)
end subroutine collective

! A child: the same calls as the parent, with its instance's values; it
! checks what scatter gave it and ends with STOP 0 (ending the task only).
subroutine child(parent)
  implicit none
  include 'fpvm3.h'
  integer, intent(in) :: parent
  integer :: inum, info, n, v(2), all(2), part(2), sibling
  real(kind=8) :: p(1)
  external PvmSum, PvmProduct, PvmMax, PvmMin, minus
  call pvmfjoingroup('fcoll', inum)
  call pvmfsiblings(n, 0, sibling)       ! the copies, and the parent
  n = n + 1
  call pvmffreezegroup('fcoll', n, info)
  v = (/ inum + 1, 10 * (inum + 1) /)
  call pvmfreduce(PvmSum, v, 2, INTEGER4, 20, 'fcoll', 0, info)
  p(1) = inum + 1
  call pvmfreduce(PvmProduct, p, 1, REAL8, 21, 'fcoll', 0, info)
  v = (/ inum + 1, 10 * (inum + 1) /)
  call pvmfreduce(PvmMax, v, 2, INTEGER4, 22, 'fcoll', 0, info)
  v = (/ inum + 1, 10 * (inum + 1) /)
  call pvmfreduce(PvmMin, v, 2, INTEGER4, 23, 'fcoll', 0, info)
  v = (/ inum + 1, 10 * (inum + 1) /)
  call pvmfreduce(minus, v, 2, INTEGER4, 24, 'fcoll', 0, info)
  v = (/ inum + 1, 10 * (inum + 1) /)
  call pvmfgather(all, v, 2, INTEGER4, 25, 'fcoll', 0, info)
  call pvmfscatter(part, all, 2, INTEGER4, 26, 'fcoll', 0, info)
  if (part(1) /= 1001 + inum .or. part(2) /= 2001 + inum) then
    print '(a,i0,a,2i6)', 'FAIL scatter to instance ', inum, ': got', part
  end if
  call pvmfbarrier('fcoll', n, info)
  call pvmflvgroup('fcoll', info)
  call pvmfexit(info)
  stop 0
end subroutine child
