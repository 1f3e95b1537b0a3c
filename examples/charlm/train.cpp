//===- train.cpp - Train a character-level GPT with a linked plan ---------===//
//
// This file implements charlm-train, the example every backend runs
// (docs/Linking.md, "The charlm example"): tofu-export's GPT (charlm.json:
// 2 layers, width 128, 4 heads, 64 bytes of context, 256 byte values,
// Adam) trained on a text with the plan for K = 1, 2 or 4 workers compiled
// in (tofu_add_plan, namespaces charlm_k1, charlm_k2, charlm_k4), on K
// threads of one process or one worker per MPI rank. Step s trains on the
// batch CharLM.h's rule gives step s, for every K and transport and in
// reference.py; each process sets only its workers' shards of the batch and
// of the initial parameters. Exit status: 0 done, 1 bad input or a failed
// step (every rank of an MPI job), 2 bad usage.
//
//===----------------------------------------------------------------------===//

#include "CharLM.h"

#include "tofu/Runtime/Checkpoint.h"
#include "tofu/Runtime/Error.h"
#include "tofu/Runtime/GeneratedPlan.h"
#include "tofu/Runtime/LinkedPlan.h"

#ifdef CHARLM_HAVE_MPI
#include "tofu/Runtime/MPITransport.h"
#endif
#ifdef CHARLM_HAVE_CUDA
#include "tofu/Runtime/GeneratedCudaKernels.h"
#endif

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>

TOFU_DECLARE_PLAN(charlm_k1)
TOFU_DECLARE_PLAN(charlm_k2)
TOFU_DECLARE_PLAN(charlm_k4)
#ifdef CHARLM_HAVE_CUDA
TOFU_DECLARE_CUDA_KERNELS(charlm_cuda)
#endif

#ifndef CHARLM_TEXT
#define CHARLM_TEXT "/usr/share/common-licenses/GPL-3"
#endif

using namespace tofu::runtime;

namespace {

enum ExitStatus { Success = 0, Failed = 1, BadUsage = 2 };

const char *const Usage =
    "usage: charlm-train [--text FILE] [--steps N] [--workers K]\n"
    "                    [--transport threads|mpi] [--backend cpu|cuda]\n"
    "                    [--init FILE.npz] [--save DIR] [--save-every N]\n"
    "                    [--resume DIR] [--losses FILE] [--timeout SECONDS]\n"
    "       mpirun -np K charlm-train --transport mpi [...]\n";

struct Options {
  std::string text = CHARLM_TEXT;
  std::int64_t steps = 40;
  /// 0: one worker on threads, the number of ranks under MPI.
  unsigned workers = 0;
  bool mpi = false;
  bool cuda = false;
  std::string init, save, resume, losses;
  std::int64_t saveEvery = 0;
  double timeout = 30;

  std::chrono::milliseconds getTimeout() const {
    return std::chrono::milliseconds(std::llround(timeout * 1000));
  }
};

/// This process's rank as the MPI launcher tells it before MPI starts (0
/// when not under mpirun): only rank 0 reports a usage error.
bool isLauncherRoot() {
  for (const char *var : {"OMPI_COMM_WORLD_RANK", "PMI_RANK"})
    if (const char *rank = std::getenv(var))
      return std::strcmp(rank, "0") == 0;
  return true;
}

void printError(const std::string &message) {
  std::fprintf(stderr, "charlm-train: error: %s\n", message.c_str());
  std::fflush(stderr);
}

/// A whole number in [lo, hi] from the value of `flag`.
std::optional<std::int64_t> parseInt(const char *text, std::int64_t lo,
                                     std::int64_t hi) {
  char *end = nullptr;
  errno = 0;
  long long value = std::strtoll(text, &end, 10);
  if (errno || end == text || *end || value < lo || value > hi)
    return std::nullopt;
  return value;
}

/// Parses the command line into `options`; returns the usage error, or "".
std::string parseOptions(int argc, char **argv, Options &options) {
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    if (flag == "--help" || flag == "-h")
      return "help";
    static const std::set<std::string> Flags = {
        "--text",   "--steps", "--workers", "--transport", "--backend",
        "--init",   "--save",  "--save-every", "--resume", "--losses",
        "--timeout"};
    if (!Flags.count(flag))
      return flag.rfind("-", 0) == 0 ? "unknown option '" + flag + "'"
                                     : "unexpected argument '" + flag + "'";
    if (i + 1 == argc)
      return flag + " needs a value";
    const char *value = argv[++i];
    auto number = [&](std::int64_t lo, std::int64_t hi, std::int64_t &out) {
      std::optional<std::int64_t> parsed = parseInt(value, lo, hi);
      if (parsed)
        out = *parsed;
      return parsed.has_value();
    };
    std::int64_t workers = 0;
    if (flag == "--text")
      options.text = value;
    else if (flag == "--steps") {
      if (!number(0, std::int64_t(1) << 31, options.steps))
        return "--steps expects a whole number >= 0, got '" +
               std::string(value) + "'";
    } else if (flag == "--workers") {
      if (!number(1, 65536, workers))
        return "--workers expects a positive whole number, got '" +
               std::string(value) + "'";
      options.workers = unsigned(workers);
    } else if (flag == "--transport") {
      if (std::strcmp(value, "threads") && std::strcmp(value, "mpi"))
        return "--transport expects threads or mpi, got '" +
               std::string(value) + "'";
      options.mpi = !std::strcmp(value, "mpi");
    } else if (flag == "--backend") {
      if (std::strcmp(value, "cpu") && std::strcmp(value, "cuda"))
        return "--backend expects cpu or cuda, got '" + std::string(value) +
               "'";
      options.cuda = !std::strcmp(value, "cuda");
    } else if (flag == "--init")
      options.init = value;
    else if (flag == "--save")
      options.save = value;
    else if (flag == "--save-every") {
      if (!number(1, std::int64_t(1) << 31, options.saveEvery))
        return "--save-every expects a positive whole number, got '" +
               std::string(value) + "'";
    } else if (flag == "--resume")
      options.resume = value;
    else if (flag == "--losses")
      options.losses = value;
    else if (flag == "--timeout") {
      char *end = nullptr;
      options.timeout = std::strtod(value, &end);
      if (end == value || *end || !(options.timeout > 0) ||
          options.timeout > 86400)
        return "--timeout expects seconds in (0, 86400], got '" +
               std::string(value) + "'";
    }
  }
  if (options.saveEvery && options.save.empty())
    return "--save-every needs --save DIR";
  if (!options.init.empty() && !options.resume.empty())
    return "--init and --resume exclude each other (a checkpoint holds the "
           "parameters)";
  return "";
}

/// The processes of the job: this one (threads), or the ranks of an MPI job.
class Processes {
public:
  virtual ~Processes() = default;
  virtual unsigned getRank() const { return 0; }
  virtual unsigned getSize() const { return 1; }
  /// This process's index among those on its node (which GPU it uses).
  virtual unsigned getLocalRank() const { return 0; }
  virtual bool isMPI() const { return false; }
  /// The transport for `workers` workers; null: LinkedPlan's threads.
  virtual std::unique_ptr<Transport>
  createTransport(std::chrono::milliseconds) {
    return nullptr;
  }
  /// Whether every process passes `ok`; a process that does not answer
  /// within the timeout ends the job.
  virtual bool agree(bool ok) { return ok; }
  /// Reports `message` (if not empty) and ends every process with `status`.
  [[noreturn]] virtual void failAll(const std::string &message, int status) {
    if (!message.empty())
      printError(message);
    std::exit(status);
  }
};

#ifdef CHARLM_HAVE_MPI
class MPIProcesses : public Processes {
public:
  explicit MPIProcesses(std::chrono::milliseconds timeout)
      : timeout(timeout) {}
  unsigned getRank() const override { return session.getRank(); }
  unsigned getSize() const override { return session.getSize(); }
  unsigned getLocalRank() const override { return session.getLocalRank(); }
  bool isMPI() const override { return true; }
  std::unique_ptr<Transport>
  createTransport(std::chrono::milliseconds timeout) override {
    return createMPITransport(timeout);
  }
  bool agree(bool ok) override {
    std::string late;
    std::optional<bool> all = session.agree(ok, timeout, late);
    if (!all)
      failAll(late, Failed);
    return *all;
  }
  /// Ranks that failed on their own (`message` not empty) print in rank
  /// order, a second apart, and half a second after printing end the job
  /// (MPI_Abort), so the lowest of them is the one that prints; ranks that
  /// only heard of another's failure wait for it to do so, and end the job
  /// themselves if it cannot.
  [[noreturn]] void failAll(const std::string &message, int status) override {
    using std::chrono::milliseconds;
    std::fflush(nullptr);
    if (message.empty()) {
      std::this_thread::sleep_for(milliseconds(1000) * (getSize() + 1));
    } else {
      std::this_thread::sleep_for(milliseconds(1000) * getRank());
      printError(message);
      std::this_thread::sleep_for(milliseconds(500));
    }
    session.abort(status);
  }

private:
  MPISession session;
  std::chrono::milliseconds timeout;
};
#endif

/// The plan compiled in for `workers` workers, or null.
const GeneratedPlan *findPlan(unsigned workers) {
  switch (workers) {
  case 1:
    return &charlm_k1::getGeneratedPlan();
  case 2:
    return &charlm_k2::getGeneratedPlan();
  case 4:
    return &charlm_k4::getGeneratedPlan();
  default:
    return nullptr;
  }
}

/// Sets every local worker's box of `tensor` to `make(box)`.
template <typename MakeFn>
void setShards(LinkedPlan &linked, unsigned tensor, MakeFn make) {
  for (unsigned w : linked.getLocalWorkers())
    if (std::optional<Box> box = linked.getStoredBox(tensor, w))
      linked.setShard(tensor, w, make(*box));
}

/// Sets the local shards of the persistent tensors `names` (all of them
/// when null) to their initial values (CharLM.h).
void initialise(LinkedPlan &linked, const std::set<std::string> *names) {
  for (const char *role : {"param", "state"})
    for (unsigned t : linked.getTensorsOfRole(role)) {
      const TensorInfo &info = linked.getPlan().tensors[t];
      if (names && !names->count(info.name))
        continue;
      setShards(linked, t, [&](const Box &box) {
        return charlm::makeInitialShard(info.name, role, info.shape, box);
      });
    }
}

/// Sets the parameters from --init's archive: every parameter must be in
/// it; state it lacks (Adam's, the masks) gets its initial value.
void loadInit(LinkedPlan &linked, const std::string &path) {
  std::vector<std::string> missing = loadNpz(linked, path);
  std::set<std::string> params;
  for (unsigned t : linked.getTensorsOfRole("param"))
    params.insert(linked.getPlan().tensors[t].name);
  for (const std::string &name : missing)
    if (params.count(name))
      throw RuntimeError("--init " + path + ": no array '" + name +
                         "' (a parameter of the graph)");
  std::set<std::string> rest(missing.begin(), missing.end());
  initialise(linked, &rest);
}

/// Whether `message`, caught by worker `rank`, only repeats another
/// worker's failure ("worker R: worker S failed: ..."): that worker reports
/// it.
bool repeatsAnotherFailure(const std::string &message, unsigned rank) {
  std::string own = "worker " + std::to_string(rank) + ": worker ";
  if (message.compare(0, own.size(), own) != 0)
    return false;
  char *end = nullptr;
  unsigned long other = std::strtoul(message.c_str() + own.size(), &end, 10);
  return other != rank && std::strncmp(end, " failed: ", 9) == 0;
}

/// Everything after the command line; returns the exit status.
int run(const Options &options, Processes &processes) {
  bool mpi = processes.isMPI();
  unsigned rank = processes.getRank();
  bool root = rank == 0;
  unsigned workers = options.workers ? options.workers : processes.getSize();
  if (!mpi && !options.workers)
    workers = 1;
  // Errors every process finds alike, before any communication.
  std::string error;
  if (mpi && workers != processes.getSize())
    error = "--workers " + std::to_string(workers) + " but MPI runs " +
            std::to_string(processes.getSize()) +
            (processes.getSize() == 1 ? " process (not started by mpirun?)"
                                      : " processes") +
            "; one worker per rank: run mpirun -np " +
            std::to_string(workers) + " charlm-train ...";
  const GeneratedPlan *plan = findPlan(workers);
  if (error.empty() && !plan)
    error = "no plan for " + std::to_string(workers) +
            " workers (charlm-train has plans for 1, 2 and 4)";
  std::vector<unsigned char> text;
  if (error.empty()) {
    try {
      text = charlm::readText(options.text);
    } catch (const RuntimeError &e) {
      error = e.what();
    }
  }
  auto reportSetup = [&](const std::string &message) {
    // Every process had the chance to fail: rank 0 reports its error, and
    // where it had none, each rank that had one.
    bool rootOk = processes.agree(!root || message.empty());
    if (!message.empty() && (root || rootOk))
      printError(message);
    return Failed;
  };
  if (!processes.agree(error.empty()))
    return reportSetup(error);

  std::unique_ptr<LinkedPlan> linked;
  std::int64_t first = 1;
  std::FILE *losses = nullptr;
  std::int64_t seq = 0;
  unsigned tokens = 0, targets = 0;
  try {
    LinkOptions link;
    link.timeout = options.getTimeout();
    link.transport = processes.createTransport(link.timeout);
#ifdef CHARLM_HAVE_CUDA
    if (options.cuda)
      link = createCudaLinkOptions(
          *plan, charlm_cuda::getGeneratedCudaKernels(),
          std::move(link.transport), processes.getLocalRank(), link.timeout);
#endif
    linked = std::make_unique<LinkedPlan>(*plan, std::move(link));
    tokens = linked->getTensor("tokens");
    targets = linked->getTensor("targets");
    linked->getLoss(); // a graph without one fails here, before a step
    seq = linked->getPlan().tensors[tokens].shape[1];
    if (std::int64_t(text.size()) <= seq)
      throw RuntimeError("--text " + options.text + ": " +
                         std::to_string(text.size()) +
                         " bytes, need at least " + std::to_string(seq + 1));
    if (!options.resume.empty())
      first = loadCheckpoint(*linked, options.resume) + 1;
    else if (!options.init.empty())
      loadInit(*linked, options.init);
    else
      initialise(*linked, nullptr);
    if (root && !options.losses.empty() &&
        !(losses = std::fopen(options.losses.c_str(), "w")))
      throw RuntimeError("--losses " + options.losses + ": " +
                         std::strerror(errno));
  } catch (const std::exception &e) {
    error = e.what();
  }
  if (!processes.agree(error.empty()))
    return reportSetup(error);

  if (root) {
    std::string from = !options.resume.empty() ? "checkpoint " + options.resume
                       : !options.init.empty() ? options.init
                                               : "the built-in initialisation";
    std::string steps =
        first <= options.steps
            ? "steps " + std::to_string(first) + " to " +
                  std::to_string(options.steps) + " from " + from
            : "no steps to run: the " + from + " is at step " +
                  std::to_string(first - 1) + ", --steps " +
                  std::to_string(options.steps);
    std::printf("charlm-train: %u worker%s (%s), text %s (%zu bytes), %s\n",
                workers, workers == 1 ? "" : "s", mpi ? "mpi" : "threads",
                options.text.c_str(), text.size(), steps.c_str());
    std::fflush(stdout);
  }
  auto start = std::chrono::steady_clock::now();
  try {
    for (std::int64_t step = first; step <= options.steps; ++step) {
      for (auto [tensor, shift] : {std::pair(tokens, 0u), {targets, 1u}})
        setShards(*linked, tensor, [&](const Box &box) {
          return charlm::makeBatchShard(text, step, box, seq, shift);
        });
      linked->runStep();
      double value = linked->getLossValue();
      if (root) {
        std::printf("step %lld: loss %.6f\n", (long long)step, value);
        std::fflush(stdout);
        if (losses) {
          std::fprintf(losses, "%lld %#.9g\n", (long long)step, value);
          std::fflush(losses);
        }
      }
      if (!options.save.empty() &&
          ((options.saveEvery && step % options.saveEvery == 0) ||
           step == options.steps))
        saveCheckpoint(*linked, options.save, step);
    }
  } catch (const std::exception &e) {
    if (losses)
      std::fclose(losses);
    processes.failAll(
        mpi && repeatsAnotherFailure(e.what(), rank) ? "" : e.what(), Failed);
  }
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  if (losses && std::fclose(losses) != 0) {
    printError("--losses " + options.losses + ": cannot write it");
    return Failed;
  }
  std::int64_t ran = options.steps >= first ? options.steps - first + 1 : 0;
  if (root && ran)
    std::printf("charlm-train: %lld steps in %.2f s (%.1f ms a step)\n",
                (long long)ran, seconds, 1000 * seconds / ran);
  return Success;
}

} // namespace

int main(int argc, char **argv) {
  Options options;
  std::string usage = parseOptions(argc, argv, options);
  if (usage == "help") {
    std::fputs(Usage, stdout);
    return Success;
  }
  if (!usage.empty()) {
    if (isLauncherRoot()) {
      printError(usage);
      std::fputs(Usage, stderr);
    }
    return BadUsage;
  }
#ifndef CHARLM_HAVE_CUDA
  if (options.cuda) {
    if (isLauncherRoot())
      printError("--backend cuda: this charlm-train was built without the "
                 "CUDA runtime (TofuRuntimeCUDA: Tofu's own build with the "
                 "CUDA toolkit and NCCL); use --backend cpu");
    return Failed;
  }
#endif
  std::unique_ptr<Processes> processes;
  if (options.mpi) {
#ifdef CHARLM_HAVE_MPI
    processes = std::make_unique<MPIProcesses>(options.getTimeout());
#else
    if (isLauncherRoot())
      printError("--transport mpi: this charlm-train was built without the "
                 "runtime's MPI transport (TofuRuntimeMPI, in Tofu's own "
                 "build with libopenmpi-dev); use --transport threads");
    return BadUsage;
#endif
  } else {
    processes = std::make_unique<Processes>();
  }
  return run(options, *processes);
}
