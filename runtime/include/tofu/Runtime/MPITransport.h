//===- MPITransport.h - One worker per MPI rank -----------------*- C++ -*-===//
//
// This file declares the MPI transport (library TofuRuntimeMPI, built when
// CMake finds MPI): the K workers are the K ranks of MPI_COMM_WORLD, each
// process runs its rank's worker, and messages are nonblocking MPI sends
// whose receives poll and give up after the timeout. docs/Runtime.md
// describes how tags and byte counts map onto MPI. Nothing here includes
// mpi.h, so users of the runtime compile without MPI's headers.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_RUNTIME_MPITRANSPORT_H
#define TOFU_RUNTIME_MPITRANSPORT_H

#include "tofu/Runtime/Transport.h"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace tofu {
namespace runtime {

/// MPI's lifetime in this process: MPI_Init on construction (once per
/// process), MPI_Finalize on destruction.
class MPISession {
public:
  MPISession();
  ~MPISession();
  MPISession(const MPISession &) = delete;
  MPISession &operator=(const MPISession &) = delete;

  /// This process's rank and the number of ranks in MPI_COMM_WORLD.
  unsigned getRank() const { return rank; }
  unsigned getSize() const { return size; }
  /// This process's index among the ranks on its node (sharing memory,
  /// MPI_COMM_TYPE_SHARED), in rank order: which of the node's GPUs it uses.
  unsigned getLocalRank() const { return localRank; }
  /// Whether every rank passes `ready` true, once all ranks have called
  /// it; None, with `late` saying which rank was waited for, when that
  /// took longer than `allowance` from this rank's call. Every rank tells
  /// rank 0, which answers all once it has heard from each (an allowance
  /// counted from when each is ready, so a peer's long compile counts only
  /// from when this rank is done with its own). It polls (MPI_Test and a
  /// 1 ms sleep), so a rank that waits leaves its core to the ranks still
  /// working.
  std::optional<bool> agree(bool ready, std::chrono::milliseconds allowance,
                            std::string &late);
  /// The same with no deadline.
  bool agree(bool ready);
  /// Ends every rank of the job at once with exit status `status`
  /// (MPI_Abort): for a failure the other ranks may not see.
  [[noreturn]] void abort(int status);

private:
  unsigned rank = 0;
  unsigned size = 1;
  unsigned localRank = 0;
  /// A copy of MPI_COMM_WORLD for agree's messages, apart from the
  /// transport's (an MPI_Comm, which is an int or a pointer).
  std::intptr_t agreeComm = 0;
};

/// The transport over MPI_COMM_WORLD: worker w is rank w, so K is the
/// world's size. Needs a live MPISession; every rank creates one.
std::unique_ptr<Transport>
createMPITransport(std::chrono::milliseconds timeout);

} // namespace runtime
} // namespace tofu

#endif // TOFU_RUNTIME_MPITRANSPORT_H
