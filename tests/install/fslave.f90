! fslave.f90 - the install test's Fortran PVM slave: squares the number
! its parent sends and sends both back.
program fslave
  include 'fpvm3.h'
  integer :: mytid, ptid, n, sq, info, bufid
  call pvmfmytid(mytid)
  call pvmfparent(ptid)
  call pvmfrecv(ptid, 1, bufid)
  call pvmfunpack(INTEGER4, n, 1, 1, info)
  sq = n * n
  call pvmfinitsend(PVMDEFAULT, info)
  call pvmfpack(INTEGER4, n, 1, 1, info)
  call pvmfpack(INTEGER4, sq, 1, 1, info)
  call pvmfsend(ptid, 2, info)
  call pvmfexit(info)
end program fslave
