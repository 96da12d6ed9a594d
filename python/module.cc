// ember's Python extension, `ember._ember`: the C++ objects that the `ember` package
// (python/ember/) presents in PyTorch's and tiktoken's conventions. tensor.cc binds the
// tensors and autograd (args.cc reads their arguments), random.cc the generators and
// random tensors, memory.cc tensors over raw memory, nn.cc layers, losses, optimizers and
// checkpoints, cuda.cc the GPUs and their settings, distributed.cc the process group, tokenizer.cc
// the tokenizer; errors are translated in one place (status.h and the translator below).

#include <pybind11/pybind11.h>

#include "base/error.h"
#include "python/status.h"

PYBIND11_MODULE(_ember, m) {
  m.doc() = "ember's C++ core; import ember, not this";
  pybind11::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const ember::Error& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    }
  });
  ember::python::BindTensor(m);
  ember::python::BindReductions(m);
  ember::python::BindCreation(m);
  ember::python::BindIndexing(m);
  ember::python::BindRandom(m);
  ember::python::BindMemory(m);
  ember::python::BindCuda(m);
  ember::python::BindDistributed(m);
  ember::python::BindNn(m);
  ember::python::BindTokenizer(m);
}
