//===- Processes.cpp - The processes a tofu-run spans ---------------------===//
//
// This file implements Processes: the default is one process running the
// thread transport; MPIProcesses (when TOFU_HAVE_MPI) holds the MPI
// session and hands out the MPI transport.
//
//===----------------------------------------------------------------------===//

#include "Processes.h"

#ifdef TOFU_HAVE_MPI
#include "tofu/Runtime/MPITransport.h"

#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <thread>
#endif

using namespace tofu;

Processes::~Processes() = default;

std::unique_ptr<runtime::Transport>
Processes::createTransport(unsigned workers,
                           std::chrono::milliseconds timeout) {
  return runtime::createThreadTransport(workers, timeout);
}

#ifdef TOFU_HAVE_MPI
namespace {
class MPIProcesses : public Processes {
public:
  unsigned getRank() const override { return session.getRank(); }
  unsigned getSize() const override { return session.getSize(); }
  unsigned getLocalRank() const override { return session.getLocalRank(); }
  std::unique_ptr<runtime::Transport>
  createTransport(unsigned, std::chrono::milliseconds timeout) override {
    return runtime::createMPITransport(timeout);
  }
  bool agree(bool ready, std::chrono::milliseconds allowance) override {
    std::string late;
    std::optional<bool> all = session.agree(ready, allowance, late);
    if (all)
      return *all;
    llvm::WithColor::error(llvm::errs(), "tofu-run")
        << "starting: " << late << " (--start-timeout)\n";
    llvm::errs().flush();
    abortAll(1);
    return false;
  }
  void abortAll(int status) override {
    // The rank whose worker failed reports just after telling the others;
    // give it a moment to do so before MPI ends every rank.
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    session.abort(status);
  }

private:
  runtime::MPISession session;
};
} // namespace
#endif

llvm::Expected<std::unique_ptr<Processes>> Processes::create(bool mpi) {
  if (!mpi)
    return std::make_unique<Processes>();
#ifdef TOFU_HAVE_MPI
  return std::make_unique<MPIProcesses>();
#else
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(),
      "--transport mpi: this tofu-run was built without MPI (install "
      "libopenmpi-dev and reconfigure); use --transport threads");
#endif
}
