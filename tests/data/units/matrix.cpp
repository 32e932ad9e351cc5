#include <vector>

#define MATRIX_DIM 4

namespace linalg {

class Matrix {
  public:
    Matrix() : cells_(MATRIX_DIM * MATRIX_DIM) {}

    double at(int row, int col) const {
        return cells_[row * MATRIX_DIM + col];
    }

    struct Shape {
        int rows;
        int cols;
        int size() const { return rows * cols; }
    };

  private:
    std::vector<double> cells_;
};

double trace(const Matrix& m) {
    return m.at(0, 0) + m.at(1, 1);
}

}  // namespace linalg
