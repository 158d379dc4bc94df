// Process-wide "communication failed" mark: set before a comm error is thrown (and when a communicator dies
// during stack unwinding) so that exit-time cleanup does not block on peers that are gone (no MPI_Finalize,
// no goodbye barrier).
#pragma once

namespace ct::comm {

void mark_comm_failed();
bool comm_failed();

}  // namespace ct::comm
