#pragma once
// File › Evaluate Pair Set…: which pair file, which surrogate (and, for an LLM, its endpoint and model).

#include "engine/surrogate/evaluation.h"

#include <QDialog>

class QComboBox;
class QLineEdit;

namespace kerncast {

class EvaluateDialog : public QDialog {
    Q_OBJECT
public:
    // surrogate: "local" or "llm", preselected with the run control's endpoint and model.
    EvaluateDialog(const QString& surrogate, const QString& endpoint, const QString& model, QWidget* parent = nullptr);

    void setPairsFile(const QString& path);
    // What to evaluate; options().pairs is empty when no file was given.
    EvaluationOptions options() const;

private:
    QLineEdit* m_pairs = nullptr;
    QComboBox* m_surrogate = nullptr;
    QLineEdit* m_endpoint = nullptr;
    QLineEdit* m_model = nullptr;
};

}  // namespace kerncast
