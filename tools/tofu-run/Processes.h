//===- Processes.h - The processes a tofu-run spans -------------*- C++ -*-===//
//
// This file declares Processes, what tofu-run knows of the processes that
// run one plan: one process whose K workers are threads, or (with
// --transport mpi, when built with MPI) one process per MPI rank, each
// running one worker. It keeps MPI out of tofu-run.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_TOOLS_TOFU_RUN_PROCESSES_H
#define TOFU_TOOLS_TOFU_RUN_PROCESSES_H

#include "tofu/Runtime/Transport.h"

#include "llvm/Support/Error.h"

namespace tofu {

/// The processes of one run and the transport between their workers.
class Processes {
public:
  virtual ~Processes();
  /// One process with threads (`mpi` false) or this MPI rank's view of the
  /// job (initializes MPI); an error when MPI was asked for but not built.
  static llvm::Expected<std::unique_ptr<Processes>> create(bool mpi);

  /// This process's index (the MPI rank) and the number of processes.
  virtual unsigned getRank() const { return 0; }
  virtual unsigned getSize() const { return 1; }
  /// This process's index among the processes on its node (which GPU it
  /// uses).
  virtual unsigned getLocalRank() const { return 0; }
  /// Whether this process prints the summary and writes the report.
  bool isRoot() const { return getRank() == 0; }
  /// The transport of a plan with `workers` workers.
  virtual std::unique_ptr<runtime::Transport>
  createTransport(unsigned workers, std::chrono::milliseconds timeout);
  /// Whether every process is `ready`: each passes its own, and all get
  /// the same answer once all have called it. A process that waits longer
  /// than `allowance` from its own call (a peer stopped before it, or
  /// still compiling) says which rank it waited for and ends every process
  /// with exit 1; a process that dies ends the MPI job. One process
  /// returns its own.
  virtual bool agree(bool ready, std::chrono::milliseconds allowance) {
    return ready;
  }
  /// Ends the run of every process with `status` after a failure other
  /// processes may not see (a no-op for one process: returning suffices).
  virtual void abortAll(int status) {}
};

} // namespace tofu

#endif // TOFU_TOOLS_TOFU_RUN_PROCESSES_H
