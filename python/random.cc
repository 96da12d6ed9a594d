// Random numbers in PyTorch's names: ember.Generator (torch.Generator over ember's
// Philox stream, tensor/random.h), ember.default_generator (the one every call without
// generator= draws from), and the functions that draw: rand, randn, randint, randperm,
// multinomial. A Generator draws the same numbers on every device, so one made for
// "cuda" is the same stream as one made for "cpu"; it remembers its device for PyTorch's
// checks.

#include "tensor/random.h"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "absl/strings/str_cat.h"
#include "autograd/autograd.h"
#include "python/args.h"
#include "python/status.h"
#include "tensor/creation.h"
#include "tensor/ops/sampling.h"

namespace py = pybind11;
namespace ag = ::ember::autograd;

namespace ember::python {
namespace {

// torch.Generator: a stream of its own, or (default_generator) the process's.
class PyGenerator {
 public:
  explicit PyGenerator(Device device) : owned_(std::make_unique<Generator>()), device_(device) {}
  static PyGenerator& Default() {
    static PyGenerator* const kDefault = new PyGenerator();
    return *kDefault;
  }

  Generator& get() const { return owned_ ? *owned_ : DefaultGenerator(); }
  Device device() const { return device_; }

 private:
  PyGenerator() : device_(Device::Cpu()) {}  // the default generator
  std::unique_ptr<Generator> owned_;
  Device device_;
};

Generator& GeneratorArg(const py::object& generator) {
  if (generator.is_none()) return DefaultGenerator();
  if (!py::isinstance<PyGenerator>(generator)) {
    throw py::type_error(
        absl::StrCat("generator: expected an ember.Generator, got ",
                     py::str(py::type::of(generator).attr("__name__")).cast<std::string>()));
  }
  return generator.cast<PyGenerator&>().get();
}

// PyTorch takes any seed in [-2^63, 2^64) and keeps it modulo 2^64.
uint64_t SeedArg(const py::int_& seed) {
  const py::int_ wrapped = py::reinterpret_steal<py::int_>(
      PyNumber_And(seed.ptr(), py::int_(0xFFFFFFFFFFFFFFFFull).ptr()));
  if (!wrapped) throw py::error_already_set();
  if (py::int_(seed) < py::int_(-(int64_t{1} << 62) * 2)) {
    throw py::value_error("manual_seed: the seed must be at least -2**63");
  }
  return wrapped.cast<uint64_t>();
}

// A seed from the operating system's entropy (torch.seed, Generator.seed).
uint64_t FreshSeed() {
  std::random_device device;
  return (static_cast<uint64_t>(device()) << 32) | device();
}

// torch.multinomial: num_samples indices a row of probs [..., n] (non-negative weights,
// need not sum to 1), each drawn with one uniform number from gen. With replacement,
// a binary search over the row's running sums a draw; without (as PyTorch), a drawn
// index's weight is zeroed before the row's next draw, each draw one pass over the
// weights (ops::Multinomial): num_samples times n.
Tensor Multinomial(const Tensor& probs, int64_t num_samples, bool replacement,
                   const py::object& generator) {
  EMBER_CHECK(probs.dim() == 1 || probs.dim() == 2, "multinomial: expected 1 or 2 dimensions, got ",
              probs.dim());
  const int64_t n = probs.size(-1);
  EMBER_CHECK(num_samples >= 1, "multinomial: num_samples must be at least 1, got ", num_samples);
  EMBER_CHECK(replacement || num_samples <= n, "multinomial: cannot draw ", num_samples,
              " samples from ", n, " categories without replacement");
  Generator& gen = GeneratorArg(generator);
  Tensor weights = ag::Detach(probs).To(Device::Cpu()).To(DType::kF64).Contiguous();
  if (probs.dim() == 1) weights = weights.View({1, n});
  if (replacement && num_samples > 1) {  // a binary search a draw, over the running sums
    const Tensor out = ops::MultinomialWithReplacement(weights, num_samples, gen);
    return (probs.dim() == 1 ? out.View({num_samples}) : out).To(probs.device());
  }
  if (!replacement && num_samples > 1) weights = weights.Clone();  // zeroed as drawn
  std::vector<Tensor> columns;
  for (int64_t s = 0; s < num_samples; ++s) {
    const Tensor drawn = ops::Multinomial(weights, gen);  // [rows]
    columns.push_back(drawn.View({weights.size(0), 1}));
    if (!replacement && s + 1 < num_samples) {
      double* w = weights.data<double>();
      const int64_t* picked = drawn.data<int64_t>();
      for (int64_t r = 0; r < weights.size(0); ++r) w[r * n + picked[r]] = 0.0;
    }
  }
  Tensor out = columns.size() == 1 ? columns[0] : ag::Cat(columns, 1);
  return (probs.dim() == 1 ? out.View({num_samples}) : out).To(probs.device());
}

}  // namespace

void BindRandom(py::module_& m) {
  py::class_<PyGenerator>(m, "Generator",
                          "torch.Generator: a Philox stream of its own, seeded with 0 until "
                          "manual_seed or seed.")
      .def(py::init([](const py::object& device) {
             return std::make_unique<PyGenerator>(DeviceArg(device).value_or(Device::Cpu()));
           }),
           py::arg("device") = "cpu")
      .def(
          "manual_seed",
          [](PyGenerator& g, const py::int_& seed) -> PyGenerator& {
            g.get().ManualSeed(SeedArg(seed));
            return g;
          },
          py::arg("seed"), py::return_value_policy::reference_internal)
      .def("seed",
           [](PyGenerator& g) {
             const uint64_t seed = FreshSeed();
             g.get().ManualSeed(seed);
             return seed;
           })
      .def("initial_seed", [](const PyGenerator& g) { return g.get().seed(); })
      .def_property_readonly("device", &PyGenerator::device)
      // The state: the seed and the count of words drawn (16 bytes, as a uint8 tensor).
      .def("get_state",
           [](const PyGenerator& g) {
             const uint64_t words[2] = {g.get().seed(), g.get().offset()};
             Tensor state = Empty({16}, DType::kU8);
             std::memcpy(state.raw_data(), words, sizeof(words));
             return state;
           })
      .def(
          "set_state",
          [](PyGenerator& g, const Tensor& state) {
            EMBER_CHECK(state.dtype() == DType::kU8 && state.numel() == 16,
                        "set_state: expected the 16-byte uint8 tensor get_state returns, got ",
                        ShapeToString(state.shape()), " of ", DTypeName(state.dtype()));
            uint64_t words[2];
            std::memcpy(words, state.Contiguous().raw_data(), sizeof(words));
            g.get().ManualSeed(words[0]);
            g.get().set_offset(words[1]);
            return &g;
          },
          py::arg("new_state"), py::return_value_policy::reference_internal);
  m.attr("default_generator") =
      py::cast(&PyGenerator::Default(), py::return_value_policy::reference);
  m.def(
      "manual_seed",
      [](const py::int_& seed) {
        ManualSeed(SeedArg(seed));
        return &PyGenerator::Default();
      },
      py::arg("seed"), py::return_value_policy::reference);
  m.def("seed", [] {
    const uint64_t seed = FreshSeed();
    ManualSeed(seed);
    return seed;
  });
  m.def("initial_seed", [] { return DefaultGenerator().seed(); });

  // rand(*size, generator=None, dtype=None, device=None, requires_grad=False), randn alike.
  m.def(
      "rand",
      [](const py::args& shape, const py::object& generator, const py::object& dtype,
         const py::object& device, bool requires_grad) {
        const DType d = dtype.is_none() ? DType::kF32 : dtype.cast<DType>();
        const Device where = DeviceArg(device).value_or(Device::Cpu());
        return Finish(Rand(ShapeArg(shape), GeneratorArg(generator), d, where), py::none(),
                      py::none(), requires_grad);
      },
      py::kw_only(), py::arg("generator") = py::none(), py::arg("dtype") = py::none(),
      py::arg("device") = py::none(), py::arg("requires_grad") = false);
  m.def(
      "randn",
      [](const py::args& shape, const py::object& generator, const py::object& dtype,
         const py::object& device, bool requires_grad) {
        const DType d = dtype.is_none() ? DType::kF32 : dtype.cast<DType>();
        return Finish(Randn(ShapeArg(shape), GeneratorArg(generator), d), py::none(), device,
                      requires_grad);
      },
      py::kw_only(), py::arg("generator") = py::none(), py::arg("dtype") = py::none(),
      py::arg("device") = py::none(), py::arg("requires_grad") = false);
  m.def(
      "_randint",
      [](int64_t low, int64_t high, const std::vector<int64_t>& shape,
         const py::object& generator) {
        return RandInt(low, high, shape, GeneratorArg(generator));
      },
      py::arg("low"), py::arg("high"), py::arg("size"), py::arg("generator") = py::none());
  m.def(
      "randperm",
      [](int64_t n, const py::object& generator, const py::object& dtype, const py::object& device,
         bool requires_grad) {
        return Finish(RandPerm(n, GeneratorArg(generator)), dtype, device, requires_grad);
      },
      py::arg("n"), py::kw_only(), py::arg("generator") = py::none(), py::arg("dtype") = py::none(),
      py::arg("device") = py::none(), py::arg("requires_grad") = false,
      "torch.randperm: a random permutation of 0 .. n-1 (int64 unless dtype says).");
  m.def("multinomial", &Multinomial, py::arg("input"), py::arg("num_samples"),
        py::arg("replacement") = false, py::kw_only(), py::arg("generator") = py::none());
  py::reinterpret_borrow<py::class_<Tensor>>(m.attr("Tensor"))
      .def("multinomial", &Multinomial, py::arg("num_samples"), py::arg("replacement") = false,
           py::kw_only(), py::arg("generator") = py::none());
}

}  // namespace ember::python
