#pragma once
// A non-owning reference to a callable, for calls that run it before they
// return (Platform::run_kernel): two pointers, never a heap allocation, unlike
// a std::function holding a lambda with more than two captures.
#include <memory>
#include <type_traits>
#include <utility>

namespace tessera {

template <class Signature>
class FunctionRef;

template <class R, class... Args>
class FunctionRef<R(Args...)> {
 public:
  template <class F, class = std::enable_if_t<!std::is_same_v<std::decay_t<F>, FunctionRef>>>
  FunctionRef(F&& f)  // NOLINT: implicit, like the callable it refers to
      : object_(const_cast<void*>(static_cast<const void*>(std::addressof(f)))), call_([](void* o, Args... a) -> R {
          return (*static_cast<std::remove_reference_t<F>*>(o))(std::forward<Args>(a)...);
        }) {}
  R operator()(Args... a) const { return call_(object_, std::forward<Args>(a)...); }

 private:
  void* object_;
  R (*call_)(void*, Args...);
};

}  // namespace tessera
