#include <string>
#include <vector>

namespace geo {

class Shape {
public:
    virtual ~Shape() = default;
    virtual double area() const = 0;
    std::string name() const { return "shape"; }
};

struct Square : public Shape {
    double side;
    double area() const override;
};

double Square::area() const {
    return side * side;
}

template <typename T>
T sum(const std::vector<T> &xs) {
    T total{};
    for (const auto &x : xs) total += x;
    return total;
}

}  // namespace geo

int main() {
    geo::Square s;
    return static_cast<int>(s.area() + geo::sum(std::vector<int>{1, 2}));
}
