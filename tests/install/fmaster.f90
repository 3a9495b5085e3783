! fmaster.f90 - the install test's Fortran PVM master, built with the
! installed upvmfort: spawns 3 copies of fslave, sends each a number,
! prints each square it gets back.  PVM's own Fortran interface
! (fpvm3.h, the pvmf* routines), as a PVM user writes it.
program fmaster
  include 'fpvm3.h'
  integer :: mytid, tids(3), numt, i, n, sq, info, bufid
  call pvmfmytid(mytid)
  call pvmfspawn('fslave', PVMDEFAULT, '*', 3, tids, numt)
  if (numt /= 3) then
     write (*, '(A,I0)') 'fmaster: pvmfspawn started ', numt
     stop 1
  end if
  do i = 1, 3
     call pvmfinitsend(PVMDEFAULT, info)
     call pvmfpack(INTEGER4, i, 1, 1, info)
     call pvmfsend(tids(i), 1, info)
  end do
  do i = 1, 3
     call pvmfrecv(-1, 2, bufid)
     call pvmfunpack(INTEGER4, n, 1, 1, info)
     call pvmfunpack(INTEGER4, sq, 1, 1, info)
     write (*, '(A,I0,A,I0)') 'fmaster: slave squared ', n, ': ', sq
  end do
  call pvmfexit(info)
end program fmaster
