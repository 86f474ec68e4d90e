/* A library built without HDF5 (no libhdf5-dev when it was configured):
 * Tipsy and GADGET-2 files are still read; HDF5 snapshots are refused,
 * saying why. */
#include "io/io.h"

int tfmm_has_hdf5(void) { return 0; }

int tfmm_hdf5_read(tfmm_io_report *r, const char *path,
                   const tfmm_read_options *o, tfmm_snapshot *out) {
  (void)o;
  (void)out;
  tfmm_io_fail_status(r, TFMM_ERR_UNSUPPORTED,
                      "%s: an HDF5 snapshot, but this library was built "
                      "without HDF5 (rebuild with libhdf5-dev)",
                      path);
  return 0;
}

int tfmm_hdf5_write(tfmm_io_report *r, const char *path, const char *file,
                    const tfmm_snapshot *s, const tfmm_snapshot_output *o,
                    double extent) {
  (void)file;
  (void)extent;
  (void)s;
  (void)o;
  tfmm_io_fail_status(r, TFMM_ERR_UNSUPPORTED,
                      "%s: this library was built without HDF5: snapshots "
                      "cannot be written (rebuild with libhdf5-dev)",
                      path);
  return 0;
}
