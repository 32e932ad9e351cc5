// Sample C++ file for the chunker tests.
#include <string>
#include <vector>

namespace geometry {

/// A generic container of shapes.
template <typename T>
class Container : public Base {
public:
    Container() : size_(0) {}
    ~Container() {}

    void add(const T& item) {
        items_.push_back(item);
        ++size_;
    }

    struct Stats {
        int count;
        double mean() const { return 0.0; }
    };

private:
    std::vector<T> items_;
    int size_;
};

int area(int w, int h) {
    auto mul = [](int a, int b) { return a * b; };
    return mul(w, h);
}

}  // namespace geometry

void geometry::Container<int>::reset() {
    size_ = 0;
}

enum class Mode { Fast, Slow };

using Name = std::string;

int main() {
    geometry::Container<int> c;
    c.add(geometry::area(2, 3));
    return 0;
}
