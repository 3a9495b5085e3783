// cxxprog.cc - the install test's C++ PVM program, built with the installed
// upvmc++ and run as `upvm run -n 3 ./cxxprog`: iostream, std::string,
// std::vector and a global object whose constructor runs once in every
// copy (each copy has its own globals), and an exception thrown and caught
// across a PVM call in every copy.
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include <pvm3.h>

namespace {
int constructions;

struct Greeting {
    std::string text;
    Greeting() : text("constructed")
    {
        constructions++;
    }
};
Greeting greeting;
} // namespace

// Throws after a PVM call (which may switch to the other copies).
int throw_after_pvm_call(int n)
{
    pvm_initsend(PvmDataDefault);
    throw std::runtime_error("caught " + std::to_string(n));
}

int main()
{
    int *siblings = nullptr;
    int nsiblings = pvm_siblings(&siblings);
    std::vector<int> numbers;
    for (int i = 1; i <= 10; i++)
        numbers.push_back(i);
    int sum = 0;
    for (int n : numbers)
        sum += n;
    std::string caught;
    try {
        throw_after_pvm_call(sum);
    } catch (const std::exception &e) {
        caught = e.what();
    }
    std::cout << "cxx: one of " << nsiblings << " siblings, global object " << greeting.text
              << " " << constructions << " time(s), vector sum " << sum << ", " << caught
              << std::endl;
    pvm_exit();
    return 0;
}
