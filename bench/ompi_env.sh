# Sourced on the GPU machine, which has no MPI: Open MPI's files copied from
# this Debian machine (bench/make_ompipack.sh) unpacked under $1, found
# there through OPAL_PREFIX. One host, shared memory (ob1 and vader), no
# rsh agent (no other host is started), as root.
root=$1
export OPAL_PREFIX=$root/usr
export OPAL_LIBDIR=$root/usr/lib/x86_64-linux-gnu/openmpi/lib
export PATH=$root/usr/bin:$PATH
export LD_LIBRARY_PATH=$root/usr/lib/x86_64-linux-gnu:$OPAL_LIBDIR:$root/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_plm_rsh_agent=/bin/false OMPI_MCA_pml=ob1
export MPIEXEC=$root/usr/bin/orterun
